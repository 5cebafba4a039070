#!/usr/bin/env bash
# Data-parallel throughput on this machine: `ffnshape train` as 1 and 2 ranks (Gloo over loopback,
# started as torchrun starts them) against PyTorch's own DistributedDataParallel (bench/ddp_reference.py,
# the same model, Gloo) at the same global batch; fp32, the cores split evenly between the ranks.
# Prints tokens/s, the ffnshape/PyTorch ratio per world size, and the share of ffnshape's gradient
# all-reduce time hidden behind backward (1 - wait with overlap / wait without it, from summary.json).
#
#   bash bench/ddp_speed.sh [--config configs/demo/conventional.yaml] [--global-batch 8] [--seq-len 256]
#       [--steps 20] [--warmup 5] [--bucket-mb 25] [--out table.md]
#
# Environment: FFNSHAPE (default build/ffnshape), PYTHON (default .venv/bin/python, with torchrun beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
FFNSHAPE=${FFNSHAPE:-build/ffnshape}
PYTHON=${PYTHON:-.venv/bin/python}
TORCHRUN=$(dirname "$PYTHON")/torchrun
config=configs/demo/conventional.yaml global_batch=8 seq_len=256 steps=20 warmup=5 bucket_mb=25 out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) config=$2; shift 2 ;;
    --global-batch) global_batch=$2; shift 2 ;;
    --seq-len) seq_len=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --bucket-mb) bucket_mb=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$FFNSHAPE" ]] || { echo "error: $FFNSHAPE is not built; run scripts/build.sh or set FFNSHAPE" >&2; exit 2; }
[[ -x "$TORCHRUN" ]] || { echo "error: no torchrun beside $PYTHON; run scripts/setup.sh or set PYTHON" >&2; exit 2; }
(( global_batch % 2 == 0 )) || { echo "error: --global-batch must be even (it is split over 2 ranks)" >&2; exit 2; }
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Zipf-distributed tokens of the config's vocabulary, as the PyTorch side draws them.
"$PYTHON" - "$config" "$work" "$(( (warmup + steps + 2) * global_batch * (seq_len + 1) + 10000 ))" <<'PY'
import sys, yaml, torch
sys.path.insert(0, "tests")
from llmc_shards import shard
vocab = yaml.safe_load(open(sys.argv[1]))["model"]["vocab_size"]
probs = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)
shard(sys.argv[2] + "/train_0.bin", torch.multinomial(probs, int(sys.argv[3]), replacement=True).tolist())
PY

# ffnshape_run NAME WORLD [--set ...]: tokens/s over the steps after warmup, from metrics.jsonl.
ffnshape_run() {
  local name=$1 world=$2 port pids=()
  shift 2
  port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  for ((r = 0; r < world; r++)); do
    RANK=$r WORLD_SIZE=$world LOCAL_RANK=$r LOCAL_WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      "$FFNSHAPE" train "$config" --run-dir "$work/$name" --set "data.train=$work/train_*.bin" --set data.val= \
      --set data.tokenizer= --set train.precision=fp32 --set train.device=cpu \
      --set "train.micro_batch=$((global_batch / world))" --set "train.seq_len=$seq_len" \
      --set "train.steps=$((warmup + steps))" --set "train.threads=$((cores / world))" --set log.every=1 \
      --set checkpoint.every=0 --set optimizer.warmup_steps=2 --set "train.bucket_mb=$bucket_mb" "$@" >"$work/$name.$r.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || { tail -n 5 "$work/$name".*.log >&2; exit 1; }; done
  "$PYTHON" - "$work/$name" "$warmup" <<'PY'
import json, sys
run, warmup = sys.argv[1], int(sys.argv[2])
steps = {m["step"]: m for m in map(json.loads, open(run + "/metrics.jsonl")) if "loss" in m}
summary = json.load(open(run + "/summary.json"))
last = max(steps)
per_step = summary["tokens_seen"] / last
tokens_per_s = per_step * (last - warmup) / (steps[last]["elapsed_s"] - steps[warmup]["elapsed_s"])
print(json.dumps({"tokens_per_s": tokens_per_s, "gradient_wait_s": summary["gradient_wait_s"], "loss": steps[last]["loss"]}))
PY
}

torch_run() {  # WORLD
  OMP_NUM_THREADS=$((cores / $1)) "$TORCHRUN" --standalone --nproc_per_node="$1" bench/ddp_reference.py \
    --config "$config" --micro-batch $((global_batch / $1)) --seq-len "$seq_len" --steps "$steps" \
    --warmup "$warmup" --threads $((cores / $1)) --bucket-mb "$bucket_mb" 2>"$work/torch$1.log" | tail -n 1
}

echo "ffnshape 1 rank ..." >&2;   f1=$(ffnshape_run one 1)
echo "ffnshape 2 ranks ..." >&2;  f2=$(ffnshape_run two 2)
echo "ffnshape 2 ranks, all-reduce after backward ..." >&2
f2_serial=$(ffnshape_run two_serial 2 --set train.overlap_comm=false)
echo "PyTorch DDP 1 rank ..." >&2;  t1=$(torch_run 1)
echo "PyTorch DDP 2 ranks ..." >&2; t2=$(torch_run 2)

"$PYTHON" - "$f1" "$f2" "$f2_serial" "$t1" "$t2" "$config" "$global_batch" "$seq_len" "$cores" "$bucket_mb" "$out" <<'PY'
import json, sys
f1, f2, f2s, t1, t2 = (json.loads(a) for a in sys.argv[1:6])
config, batch, seq, cores, bucket_mb, out = sys.argv[6:12]
hidden = 1 - f2["gradient_wait_s"] / f2s["gradient_wait_s"] if f2s["gradient_wait_s"] > 0 else float("nan")
lines = [
    f"Data parallel, {config}, fp32, global batch {batch} x {seq} tokens, {cores} cores split over the ranks, "
    f"Gloo over loopback, {bucket_mb} MB buckets; torch {t1['torch']}",
    "",
    "| ranks | ffnshape tokens/s | PyTorch DDP tokens/s | ratio |",
    "|---:|---:|---:|---:|",
    f"| 1 | {f1['tokens_per_s']:.0f} | {t1['tokens_per_s']:.0f} | {f1['tokens_per_s'] / t1['tokens_per_s']:.3f} |",
    f"| 2 | {f2['tokens_per_s']:.0f} | {t2['tokens_per_s']:.0f} | {f2['tokens_per_s'] / t2['tokens_per_s']:.3f} |",
    "",
    f"ffnshape, 2 ranks: waiting for gradient sums after backward {f2['gradient_wait_s']:.3f} s with overlap, "
    f"{f2s['gradient_wait_s']:.3f} s with every all-reduce started after backward: {100 * hidden:.0f}% hidden",
]
text = "\n".join(lines)
print(text)
if out:
    open(out, "w").write(text + "\n")
PY
