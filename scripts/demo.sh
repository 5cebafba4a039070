#!/usr/bin/env bash
# The main job on the built-in default data: installs and builds, fetches the Brown corpus and prepares
# it (SentencePiece BPE, 4096 tokens), then runs the demo experiment configs/demo/experiment.yaml on the
# CPU (about 23 minutes here; bf16 autocast): a conventional and an hourglass model on the same
# parameter budget, plus a geometry-guided width schedule from a profile of the conventional run. It
# ends with the report table (runs/demo/report.md) and plots (runs/demo/*.png).
#
#   bash scripts/demo.sh [EXPERIMENT.yaml] [--only ARM]     (default configs/demo/experiment.yaml)
#   bash scripts/demo.sh --train CONFIG.yaml [--set k=v]... (one training run instead, e.g. a demo config)
#
# Rerunning skips finished runs and resumes interrupted ones.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

"$root/scripts/setup.sh"
echo "== building"
"$root/scripts/build.sh" >/dev/null
ffnshape="${BUILD_DIR:-$root/build}/ffnshape"

echo "== the Brown corpus"
bash scripts/fetch_brown.sh data/brown/text
if [ ! -f data/brown/meta.json ]; then
  "$ffnshape" data prepare --input data/brown/text --out data/brown --vocab-size 4096 --val-fraction 0.05
fi

if [ "${1:-}" = "--train" ]; then
  config=$2
  shift 2
  run_dir="runs/demo-$(basename "$config" .yaml)"
  echo "== training $config into $run_dir"
  "$ffnshape" train "$config" --run-dir "$run_dir" "$@"
  /usr/bin/python3 scripts/plot_runs.py "$run_dir" --out "$run_dir/loss.png" --title "$(basename "$config") on the Brown corpus"
  exit 0
fi

experiment=${1:-configs/demo/experiment.yaml}
[ $# -gt 0 ] && shift
echo "== experiment $experiment"
"$ffnshape" experiment "$experiment" "$@"
