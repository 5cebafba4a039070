#!/usr/bin/env bash
# `log.tensorboard: true`: RUN/tb/ holds one event file whose scalars tensorboard's own readers
# (EventAccumulator, EventFileLoader) find equal to metrics.jsonl, with the resolved config and the
# shape as text, and the per-layer statistics of log.layer_stats_every (which leave the losses as they
# are); a run resumed after a crash past its last checkpoint (and a torn last record) repeats no step;
# an experiment writes one event folder per run. Environment: FFNSHAPE, PYTHON (with
# tensorboard; scripts/setup.sh installs it). Skipped (exit 77) without tensorboard.
set -uo pipefail
here=$(dirname "$0")
source "$here/cli_lib.sh"
python=${PYTHON:-$here/../.venv/bin/python}
if ! "$python" -c 'import tensorboard' 2>/dev/null; then
  echo "cli_tensorboard: skipped (no tensorboard in $python; scripts/setup.sh installs it)"
  exit 77
fi
check() { "$python" "$here/tensorboard_check.py" "$@"; }

python3 - "$tmp" "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from llmc_shards import shard, text
shard(sys.argv[1] + "/train_0.bin", text(30000))
shard(sys.argv[1] + "/val_0.bin", text(5000))
PY
cat >"$tmp/tb.yaml" <<YAML
model: {vocab_size: 64, d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 32, ffn: {hidden: 64}}
data: {train: "$tmp/train_*.bin", val: "$tmp/val_*.bin"}
train: {seq_len: 32, micro_batch: 4, steps: 30, threads: 1}
optimizer: {lr: 3.0e-3, warmup_steps: 3}
eval: {every: 10, batches: 2}
checkpoint: {every: 10, keep: 3}
log: {every: 5, tensorboard: true, layer_stats_every: 10}
YAML

# 1. A whole run: every logged value, under its tag, at its step; the config and the shape as text.
expect 0 "train with log.tensorboard" -- "$FFNSHAPE" train "$tmp/tb.yaml" --run-dir "$tmp/run"
check "$tmp/run" --text config shape || fail "event file of a whole run"
"$python" - "$tmp/run" <<'PY' || fail "text summaries"
import sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1] + "/tb", size_guidance={"tensors": 0})
acc.Reload()
config = acc.Tensors("config")[0].tensor_proto.string_val[0].decode()
shape = acc.Tensors("shape")[0].tensor_proto.string_val[0].decode()
assert "tensorboard: true" in config and "d_model: 32" in config, config
assert "conventional d_ff 64" in shape and "| 1 | 64 |" in shape, shape
PY
# Per-layer statistics at step 1 and every 10 steps: 8 statistics for each of the 2 layers, finite,
# and a residual stream that leaves block 0 as it enters block 1.
"$python" - "$tmp/run/metrics.jsonl" <<'PY' || fail "layer statistics in metrics.jsonl"
import json, math, sys
entries = [json.loads(line) for line in open(sys.argv[1])]
layers = {e["step"]: e["layers"] for e in entries if "layers" in e}
assert sorted(layers) == [1, 10, 20, 30], sorted(layers)
for step, stats in layers.items():
    assert len(stats) == 8 and all(len(v) == 2 and all(math.isfinite(x) and x >= 0 for x in v) for v in stats.values()), stats
    assert stats["resid_out_rms"][0] == stats["resid_in_rms"][1], (step, stats)
    assert all(0 < r < 1 for r in stats["ffn_update_ratio"] + stats["attn_update_ratio"]), stats
PY
/usr/bin/python3 "$here/../scripts/plot_layer_stats.py" "$tmp/run" --out "$tmp/layers.png" >/dev/null &&
  [ -s "$tmp/layers.png" ] || fail "plot_layer_stats.py drew nothing"

# 2. A crash after step 30's log but before its checkpoint: the resumed run starts from step 20 and
#    writes steps 25 and 30 again; a torn record at the end of the file (a kill mid-write) is dropped.
cp -r "$tmp/run" "$tmp/crashed"
rm -rf "$tmp/crashed/checkpoints/step_00000030" "$tmp/crashed/summary.json"
printf '\x20\x00\x00' >>"$tmp/crashed"/tb/events.out.tfevents.*
expect 0 "resume after a crash" -- "$FFNSHAPE" train "$tmp/tb.yaml" --run-dir "$tmp/crashed"
contains "resuming from" "$out" "resumed from step 20"
check "$tmp/crashed" --text config shape || fail "event file of a resumed run"
# The resumed run repeats the same steps bit for bit, so its losses are the whole run's.
"$python" - "$tmp/run" "$tmp/crashed" <<'PY' || fail "resumed losses differ from the whole run's"
import sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
def losses(run):
    acc = EventAccumulator(run + "/tb", size_guidance={"scalars": 0})
    acc.Reload()
    tags = ["train/loss", "val/loss", "ffn_out_rms/layer_01", "attn_grad_norm/layer_00", "ffn_update_ratio/layer_01"]
    return [[(e.step, e.value) for e in acc.Scalars(tag)] for tag in tags]
assert losses(sys.argv[1]) == losses(sys.argv[2]), (losses(sys.argv[1]), losses(sys.argv[2]))
PY

# 3. Off by default: no tb/ folder and no layer statistics; and the statistics change nothing in
#    training: the same losses, bit for bit, as the run that measured them.
expect 0 "train without log.tensorboard" -- "$FFNSHAPE" train "$tmp/tb.yaml" --run-dir "$tmp/plain" \
  --set log.tensorboard=false --set log.layer_stats_every=0
[ ! -e "$tmp/plain/tb" ] || fail "log.tensorboard false wrote $tmp/plain/tb"
"$python" - "$tmp/run/metrics.jsonl" "$tmp/plain/metrics.jsonl" <<'PY' || fail "layer statistics changed the losses"
import json, sys
def read(path):
    entries = [json.loads(line) for line in open(path)]
    return [(e["step"], e.get("loss"), e.get("val_loss")) for e in entries if "loss" in e or "val_loss" in e], \
           [e for e in entries if "layers" in e]
(measured, stats), (plain, none) = read(sys.argv[1]), read(sys.argv[2])
assert measured == plain and len(measured) >= 9 and stats and not none, (measured, plain, none)
PY

# 4. An experiment: one event folder per run, so `tensorboard --logdir` compares the arms.
cat >"$tmp/exp.yaml" <<YAML
name: tb
base: tb.yaml
set: [train.steps=10]
seeds: [1]
budget: {reference: fast}
arms:
  - name: fast
  - name: slow
    set: [optimizer.lr=1.0e-3]
YAML
expect 0 "experiment with log.tensorboard" -- "$FFNSHAPE" experiment "$tmp/exp.yaml" --run-root "$tmp/runs"
for arm in fast slow; do
  check "$tmp/runs/$arm/seed-1" --text config shape || fail "event file of the $arm arm"
done

finish "cli_tensorboard"
