#!/usr/bin/env bash
# The main job on the built-in default data: installs and builds, fetches the Brown corpus and prepares
# it (SentencePiece BPE, 4096 tokens), trains configs/demo/conventional.yaml on the CPU (about ten
# minutes here; bf16 autocast), prints the validation perplexity and draws the loss curve to a PNG.
#
#   bash scripts/demo.sh [CONFIG] [--set k=v ...]      (default configs/demo/conventional.yaml)
#
# Rerunning resumes an interrupted run and skips finished steps. Outputs: runs/demo-<config name>/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
config=${1:-configs/demo/conventional.yaml}
[ $# -gt 0 ] && shift

"$root/scripts/setup.sh"
echo "== building"
"$root/scripts/build.sh" >/dev/null
ffnshape="${BUILD_DIR:-$root/build}/ffnshape"

echo "== the Brown corpus"
bash scripts/fetch_brown.sh data/brown/text
if [ ! -f data/brown/meta.json ]; then
  "$ffnshape" data prepare --input data/brown/text --out data/brown --vocab-size 4096 --val-fraction 0.05
fi

run_dir="runs/demo-$(basename "$config" .yaml)"
echo "== training $config into $run_dir"
"$ffnshape" params "$config" "$@" | sed -n '1,2p'
"$ffnshape" train "$config" --run-dir "$run_dir" "$@"

echo "== result"
/usr/bin/python3 - "$run_dir/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"validation loss {s['val_loss']:.4f}, perplexity {s['val_ppl']:.2f} after {s['tokens_seen']:,} tokens "
      f"({s['wall_time_s'] / 60:.1f} min, {s['tokens_per_s']:,.0f} tokens/s, {s['precision']} on {s['device']})")
PY
/usr/bin/python3 scripts/plot_runs.py "$run_dir" --out "$run_dir/loss.png" --title "$(basename "$config") on the Brown corpus"
