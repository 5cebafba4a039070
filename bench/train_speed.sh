#!/usr/bin/env bash
# Side-by-side training-step throughput: ffnshape (bench_train_speed, the trainer's exact step) versus
# the same model in Python PyTorch (bench/torch_reference.py), same steps, batch, sequence length,
# dtype and thread count. Builds nothing: point $BENCH at a built bench_train_speed.
#
#   BENCH=build/bench_train_speed bash bench/train_speed.sh [--batch 8] [--seq-len 256] [--steps 20]
#       [--warmup 3] [--threads N] [--repeats 1] [--configs "a.yaml b.yaml"] [--dtypes "fp32 bf16"]
#       [--out table.md]
#
# Environment: BENCH (default build/bench_train_speed), FFNSHAPE_CLI (default: `ffnshape` next to
# $BENCH, else build/ffnshape) for the training FLOPs per token, PYTHON (default /usr/bin/python3,
# Debian's python3-torch; the first python3 on PATH may not have torch).
#
# Each row runs C++ and Python alternately (--repeats times each, median reported). MFU = tokens/s x
# flops_per_token_training / the matmul peak measured here (1024^3 matmul, same threads and dtype).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/bench_train_speed}
PYTHON=${PYTHON:-/usr/bin/python3}
if [[ -z "${FFNSHAPE_CLI:-}" ]]; then
  FFNSHAPE_CLI="$(dirname "$BENCH")/ffnshape"
  [[ -x "$FFNSHAPE_CLI" ]] || FFNSHAPE_CLI=build/ffnshape
fi
batch=8 seq_len=256 steps=20 warmup=3 threads=$(nproc) repeats=1 out=""
configs="configs/demo/conventional.yaml configs/demo/hourglass.yaml"
dtypes="fp32 bf16"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --batch) batch=$2; shift 2 ;;
    --seq-len) seq_len=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --dtypes) dtypes=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BENCH" ]] || { echo "error: $BENCH is not an executable; build it (target bench_train_speed) or set BENCH" >&2; exit 2; }
[[ -x "$FFNSHAPE_CLI" ]] || { echo "error: $FFNSHAPE_CLI not found; build ffnshape_cli or set FFNSHAPE_CLI" >&2; exit 2; }
"$PYTHON" -c 'import torch, yaml' 2>/dev/null || {
  echo "error: $PYTHON lacks torch or yaml: apt-get install -y python3-torch python3-yaml" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--batch "$batch" --seq-len "$seq_len" --steps "$steps" --warmup "$warmup" --threads "$threads")

echo "measuring matmul peak (1024^3, $threads threads) ..." >&2
"$PYTHON" - "$threads" > "$work/peak.json" <<'EOF'
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
n, out = 1024, {}
for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(5):  # best of 5 timings of 4 products: the least disturbed by other load
        t = time.perf_counter()
        for _ in range(4):
            torch.mm(a, b)
        best = min(best, (time.perf_counter() - t) / 4)
    out[name] = 2.0 * n ** 3 / best
print(json.dumps(out))
EOF

for config in $configs; do
  "$FFNSHAPE_CLI" params "$config" --json --seq-len "$seq_len" > "$work/$(basename "$config").params.json"
  for dtype in $dtypes; do
    for r in $(seq 1 "$repeats"); do
      tag="$(basename "$config" .yaml).$dtype.$r"
      echo "running $config $dtype ($r/$repeats): ffnshape ..." >&2
      "$BENCH" --config "$config" --dtype "$dtype" "${common[@]}" > "$work/$tag.cpp.json"
      echo "running $config $dtype ($r/$repeats): pytorch ..." >&2
      "$PYTHON" bench/torch_reference.py --config "$config" --dtype "$dtype" "${common[@]}" > "$work/$tag.py.json"
    done
  done
done

"$PYTHON" - "$work" "$out" "$batch" "$seq_len" "$steps" "$warmup" "$threads" "$repeats" "$configs" "$dtypes" <<'EOF'
import json, os, statistics, sys
work, out, batch, seq_len, steps, warmup, threads, repeats, configs, dtypes = sys.argv[1:]
peak = json.load(open(os.path.join(work, "peak.json")))
lines = [
    f"batch {batch}, seq {seq_len}, {steps} timed steps after {warmup} warmup, {threads} threads, "
    f"median of {repeats} alternating run(s) per side",
    f"matmul peak (1024^3): fp32 {peak['fp32'] / 1e9:.1f} GFLOP/s, bf16 {peak['bf16'] / 1e9:.1f} GFLOP/s",
    "",
    "| config | dtype | ffnshape tok/s | pytorch tok/s | ratio | ffnshape MFU | pytorch MFU "
    "| ffnshape loss first -> last | pytorch loss first -> last |",
    "|---|---|---:|---:|---:|---:|---:|---|---|",
]
worst = None
for config in configs.split():
    name = os.path.basename(config)
    params = json.load(open(os.path.join(work, name + ".params.json")))
    if isinstance(params, list):
        params = params[0]
    fpt = float(params["flops_per_token_training"])
    for dtype in dtypes.split():
        runs = {side: [json.load(open(os.path.join(work, f"{name[:-5]}.{dtype}.{r}.{side}.json")))
                       for r in range(1, int(repeats) + 1)] for side in ("cpp", "py")}
        tps = {side: statistics.median(run["tokens_per_s"] for run in runs[side]) for side in runs}
        loss = {side: f"{runs[side][0]['loss_first']:.3f} -> {runs[side][0]['loss_last']:.3f}" for side in runs}
        mfu = {side: tps[side] * fpt / peak[dtype] for side in runs}
        ratio = tps["cpp"] / tps["py"]
        worst = ratio if worst is None else min(worst, ratio)
        lines.append(f"| {name} | {dtype} | {tps['cpp']:.0f} | {tps['py']:.0f} | {ratio:.3f} | "
                     f"{100 * mfu['cpp']:.1f}% | {100 * mfu['py']:.1f}% | {loss['cpp']} | {loss['py']} |")
lines += ["", f"lowest ratio (ffnshape / pytorch): {worst:.3f} "
              f"({'at least as fast in every row' if worst >= 1.0 else 'SLOWER in at least one row'})"]
text = "\n".join(lines)
print(text)
if out:
    with open(out, "w") as f:
        f.write(text + "\n")
EOF
