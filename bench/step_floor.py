#!/usr/bin/env python3
"""How much of the 1.3x-eager target LibTorch's own kernels leave to ffnshape (bench/train_speed.sh --floor).

    step_floor.py WORK_DIR --configs "a.yaml b.yaml" --dtypes "fp32 bf16" --tokens-per-step N [--out table.md]

For each row, WORK_DIR holds <config-stem>.<dtype>.1.py.json (eager PyTorch's tokens/s),
<stem>.<dtype>.floor.json (bench_train_speed --breakdown: AdamW and gradient-clipping time per step)
and <stem>.<dtype>.trace.json (a Chrome trace of 3 training steps from FFNSHAPE_BENCH_TRACE).

The step's matrix products (aten::mm, forward and backward) are LibTorch's kernels, called once each
as PyTorch calls them; attention is LibTorch's fused SDPA kernels or, for fp32 on the CPU,
ffnshape's attention node (ffnshape::causal_attention and its backward), forward and backward; AdamW
and clipping must read every parameter and gradient. The table compares their time with the step
time that 1.3x eager's tokens/s allows: what remains is all that norms, RoPE, SwiGLU, residual adds,
the embedding and the loss may take.
"""
import argparse
import collections
import json
import os

TARGET = 1.3  # the tokens/s target against eager PyTorch
STEPS_IN_TRACE = 3  # bench/train_speed.cpp records this many steps under FFNSHAPE_BENCH_TRACE
ATTENTION = ("_scaled_dot_product_flash_attention", "_efficient_attention", "_scaled_dot_product_cudnn")
OWN_ATTENTION = ("ffnshape::causal_attention", "ffnshape::causal_attention_backward")  # src/nn/causal_attention_cpu.cpp


def op_ms_per_step(trace_path):
    trace = json.load(open(trace_path))
    events = trace if isinstance(trace, list) else trace.get("traceEvents", [])
    total = collections.Counter()
    for e in events:
        if e.get("ph") == "X":
            total[e["name"]] += e["dur"] / 1000.0
    products = total["aten::mm"] + total["aten::bmm"]
    attention = sum(ms for name, ms in total.items() if name.startswith("aten::") and any(a in name for a in ATTENTION))
    attention += sum(total[name] for name in OWN_ATTENTION)
    return products / STEPS_IN_TRACE, attention / STEPS_IN_TRACE


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--configs", required=True)
    ap.add_argument("--dtypes", required=True)
    ap.add_argument("--tokens-per-step", type=int, required=True)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    lines = ["| config | dtype | step at 1.3x eager ms | products ms | attention ms | AdamW + clip ms "
             "| these / step | left for the rest ms | the rest now ms |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for config in args.configs.split():
        stem = os.path.basename(config)[:-5]
        for dtype in args.dtypes.split():
            eager = json.load(open(os.path.join(args.work, f"{stem}.{dtype}.1.py.json")))
            floor = json.load(open(os.path.join(args.work, f"{stem}.{dtype}.floor.json")))
            products, attention = op_ms_per_step(os.path.join(args.work, f"{stem}.{dtype}.trace.json"))
            breakdown = floor["breakdown_ms"]  # ms per step, phase by phase
            optimizer = breakdown["optimizer"] + breakdown["clip"]
            step_now = sum(breakdown.values())
            budget = args.tokens_per_step / (TARGET * eager["tokens_per_s"]) * 1000.0
            fixed = products + attention + optimizer
            lines.append(f"| {os.path.basename(config)} | {dtype} | {budget:.1f} | {products:.1f} | {attention:.1f} "
                         f"| {optimizer:.1f} | {fixed / budget:.1%} | {budget - fixed:.1f} | {step_now - fixed:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
