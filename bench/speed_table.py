#!/usr/bin/env python3
"""The table of bench/train_speed.sh from the JSON lines its runs left in a work folder.

    speed_table.py WORK_DIR --configs "a.yaml b.yaml" --dtypes "fp32 bf16" --repeats N --device cpu|cuda
                   --header "batch 8, seq 256, ..." [--out table.md]

WORK_DIR holds peak.json (the measured matmul peak per dtype), <config>.params.json (`ffnshape
params --json`) and <config-stem>.<dtype>.<repeat>.<side>.json with side cpp (bench_train_speed),
py (eager PyTorch) and pyc (torch.compile; may be missing where compilation failed).
"""
import argparse
import json
import os
import statistics


def load(path):
    return json.load(open(path)) if os.path.exists(path) else None


def paired_ratio(ours, theirs):
    """Median over repeats of ours / theirs from the same repeat: the two runs of a repeat are back to
    back, so a host whose speed drifts over minutes moves both (a ratio of medians mixes runs minutes
    apart). None when no repeat has both."""
    ratios = [a["tokens_per_s"] / b["tokens_per_s"] for a, b in zip(ours, theirs) if a and b]
    return statistics.median(ratios) if ratios else None


def row(work, config, dtype, repeats, device, peak):
    name = os.path.basename(config)
    params = json.load(open(os.path.join(work, name + ".params.json")))
    params = params[0] if isinstance(params, list) else params
    flops_per_token = float(params["flops_per_token_training"])
    runs, by_repeat = {}, {}
    for side in ("cpp", "py", "pyc"):
        found = [load(os.path.join(work, f"{name[:-5]}.{dtype}.{i}.{side}.json")) for i in range(1, repeats + 1)]
        by_repeat[side] = found
        runs[side] = [r for r in found if r]
    tps = {side: statistics.median(r["tokens_per_s"] for r in runs[side]) for side in runs if runs[side]}
    # MFU: against the GPU's published dense peak where bench_train_speed knows it, else the measured one.
    published = runs["cpp"][0].get("published_peak_flops", 0) if device == "cuda" else 0
    denominator = published or peak[dtype]
    mfu = {side: tps[side] * flops_per_token / denominator for side in tps}
    vs_eager = paired_ratio(by_repeat["cpp"], by_repeat["py"])
    vs_compile = paired_ratio(by_repeat["cpp"], by_repeat["pyc"])
    if device == "cuda":
        memory = f"{runs['cpp'][0]['peak_memory_bytes'] / 1e9:.2f} / {runs['py'][0]['peak_memory_bytes'] / 1e9:.2f} GB"
    else:
        memory = "-"
    loss = (f"{runs['cpp'][0]['loss_first']:.3f} -> {runs['cpp'][0]['loss_last']:.3f} / "
            f"{runs['py'][0]['loss_first']:.3f} -> {runs['py'][0]['loss_last']:.3f}")
    compile_tps = f"{tps['pyc']:.0f}" if "pyc" in tps else "-"
    compile_ratio = f"{vs_compile:.3f}" if vs_compile else "-"
    text = (f"| {name} | {dtype} | {tps['cpp']:.0f} | {tps['py']:.0f} | {compile_tps} | {vs_eager:.3f} | "
            f"{compile_ratio} | {100 * mfu['cpp']:.1f}% | {100 * mfu['py']:.1f}% | {memory} | {loss} |")
    return text, vs_eager, vs_compile, runs["py"][0]["torch"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("work")
    ap.add_argument("--configs", required=True)
    ap.add_argument("--dtypes", required=True)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--header", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()

    peak = json.load(open(os.path.join(args.work, "peak.json")))
    rows, eager, compiled, versions = [], [], [], set()
    for config in args.configs.split():
        for dtype in args.dtypes.split():
            text, vs_eager, vs_compile, version = row(args.work, config, dtype, args.repeats, args.device, peak)
            rows.append(text)
            eager.append(vs_eager)
            if vs_compile:
                compiled.append(vs_compile)
            versions.add(version)
    lines = [
        f"{args.header}, PyTorch {', '.join(sorted(versions))}",
        f"measured matmul peak: fp32 {peak['fp32'] / 1e9:.1f} GFLOP/s, bf16 {peak['bf16'] / 1e9:.1f} GFLOP/s"
        + (" (MFU is against the GPU's published dense peak where it is known)" if args.device == "cuda" else ""),
        "",
        "| config | dtype | ffnshape tok/s | eager tok/s | compile tok/s | vs eager | vs compile | ffnshape MFU "
        "| eager MFU | peak memory ffnshape / eager | loss first -> last (ffnshape / eager) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
        *rows,
        "",
        f"lowest ratio ffnshape / PyTorch eager: {min(eager):.3f}"
        + (f"; ffnshape / torch.compile: {min(compiled):.3f}" if compiled else "; torch.compile: not run"),
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
