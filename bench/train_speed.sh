#!/usr/bin/env bash
# Side-by-side training-step throughput: ffnshape (bench_train_speed, the trainer's exact step) versus
# the same model in Python PyTorch of the same version as the LibTorch we build against
# (bench/torch_reference.py, eager and torch.compile), same steps, batch, sequence length, dtype,
# device and thread count. Builds nothing: point $BENCH at a built bench_train_speed.
#
#   BENCH=build/bench_train_speed bash bench/train_speed.sh [--batch 8] [--seq-len 256] [--steps 20]
#       [--warmup 3] [--threads N] [--repeats 1] [--configs "a.yaml b.yaml"] [--dtypes "fp32 bf16"]
#       [--device cpu|cuda] [--no-compile] [--floor] [--out table.md]
#
# Environment: BENCH (default build/bench_train_speed), FFNSHAPE_CLI (default: `ffnshape` next to
# $BENCH, else build/ffnshape) for the training FLOPs per token, PYTHON (default the project's
# .venv/bin/python, whose torch wheel is the LibTorch of the build).
#
# Each row runs C++, eager Python and compiled Python in turn (--repeats times each; tokens/s is the
# median per side, a ratio the median of each repeat's ratio between its back-to-back runs;
# compilation happens in the untimed warmup). MFU = tokens/s x flops_per_token_training /
# peak: on the CPU the matmul peak measured here (1024^3, same threads and dtype), on a GPU the
# published dense peak of the device (bench_train_speed reports it; else the measured 8192^3 one).
# bench/speed_table.py makes the table. --floor adds, per row, one more ffnshape run that records a
# trace of 3 steps and the time of each phase, and a second table (bench/step_floor.py): the step time
# at 1.3x eager's tokens/s against what LibTorch's matrix products and attention kernels and the
# optimizer take inside ffnshape's step (CPU).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/bench_train_speed}
PYTHON=${PYTHON:-.venv/bin/python}
if [[ -z "${FFNSHAPE_CLI:-}" ]]; then
  FFNSHAPE_CLI="$(dirname "$BENCH")/ffnshape"
  [[ -x "$FFNSHAPE_CLI" ]] || FFNSHAPE_CLI=build/ffnshape
fi
batch=8 seq_len=256 steps=20 warmup=3 threads=$(nproc) repeats=1 out="" device=cpu compile=1 floor=0
configs="configs/demo/conventional.yaml configs/demo/hourglass.yaml"
dtypes="fp32 bf16" dtypes_given=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --batch) batch=$2; shift 2 ;;
    --seq-len) seq_len=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --dtypes) dtypes=$2; dtypes_given=1; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --no-compile) compile=0; shift ;;
    --floor) floor=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BENCH" ]] || { echo "error: $BENCH is not an executable; build it (target bench_train_speed) or set BENCH" >&2; exit 2; }
[[ -x "$FFNSHAPE_CLI" ]] || { echo "error: $FFNSHAPE_CLI not found; build ffnshape_cli or set FFNSHAPE_CLI" >&2; exit 2; }
"$PYTHON" -c 'import torch, yaml' 2>/dev/null || {
  echo "error: $PYTHON lacks torch or yaml: run scripts/setup.sh (or set PYTHON)" >&2; exit 2; }
# Without native bf16 products oneDNN emulates them about 200x slower than fp32: a default run leaves
# bf16 out there; --dtypes still asks for it.
if [[ $device == cpu && $dtypes_given -eq 0 ]] && ! bash scripts/cpu_has_native_bf16.sh; then
  dtypes="fp32"
  echo "note: this CPU has no native bf16 products; measuring fp32 only (--dtypes bf16 to measure it anyway)" >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(--batch "$batch" --seq-len "$seq_len" --steps "$steps" --warmup "$warmup" --threads "$threads" --device "$device")

echo "measuring matmul peak ($device, $threads threads) ..." >&2
"$PYTHON" - "$threads" "$device" > "$work/peak.json" <<'EOF'
import json, sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
device = torch.device(sys.argv[2])
n, out = (8192 if device.type == "cuda" else 1024), {}
sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
    a, b = torch.randn(n, n, device=device).to(dtype), torch.randn(n, n, device=device).to(dtype)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(5):  # best of 5 timings of 4 products: the least disturbed by other load
        sync()
        t = time.perf_counter()
        for _ in range(4):
            torch.mm(a, b)
        sync()
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
      echo "running $config $dtype ($r/$repeats): pytorch eager ..." >&2
      "$PYTHON" bench/torch_reference.py --config "$config" --dtype "$dtype" "${common[@]}" > "$work/$tag.py.json"
      if [[ $compile -eq 1 ]]; then
        echo "running $config $dtype ($r/$repeats): pytorch torch.compile ..." >&2
        "$PYTHON" bench/torch_reference.py --config "$config" --dtype "$dtype" "${common[@]}" --compile \
          >"$work/$tag.pyc.json" 2>"$work/$tag.pyc.err" || {
          echo "   torch.compile failed, column left empty: $(tail -n 1 "$work/$tag.pyc.err")" >&2
          rm -f "$work/$tag.pyc.json"
        }
      fi
    done
    if [[ $floor -eq 1 ]]; then
      echo "running $config $dtype: ffnshape with a trace and phase times (--floor) ..." >&2
      stem="$(basename "$config" .yaml).$dtype"
      FFNSHAPE_BENCH_TRACE="$work/$stem.trace.json" "$BENCH" --config "$config" --dtype "$dtype" "${common[@]}" \
        --breakdown > "$work/$stem.floor.json"
    fi
  done
done

"$PYTHON" bench/speed_table.py "$work" --configs "$configs" --dtypes "$dtypes" --repeats "$repeats" \
  --device "$device" --out "$out" \
  --header "$device, batch $batch, seq $seq_len, $steps timed steps after $warmup warmup, $threads threads, median of $repeats run(s) per side"
if [[ $floor -eq 1 ]]; then
  "$PYTHON" bench/step_floor.py "$work" --configs "$configs" --dtypes "$dtypes" \
    --tokens-per-step $((batch * seq_len)) --out "$out"
fi
