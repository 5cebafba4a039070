#!/usr/bin/env bash
# `log.tensorboard: true`: RUN/tb/ holds one event file whose scalars tensorboard's own readers
# (EventAccumulator, EventFileLoader) find equal to metrics.jsonl, with the resolved config and the
# shape as text; a run resumed after a crash past its last checkpoint (and a torn last record) repeats
# no step; an experiment writes one event folder per run. Environment: FFNSHAPE, PYTHON (with
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
log: {every: 5, tensorboard: true}
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
    return [(e.step, e.value) for e in acc.Scalars("train/loss")] + [(e.step, e.value) for e in acc.Scalars("val/loss")]
assert losses(sys.argv[1]) == losses(sys.argv[2]), (losses(sys.argv[1]), losses(sys.argv[2]))
PY

# 3. Off by default: no tb/ folder.
expect 0 "train without log.tensorboard" -- "$FFNSHAPE" train "$tmp/tb.yaml" --run-dir "$tmp/plain" \
  --set log.tensorboard=false --set train.steps=5
[ ! -e "$tmp/plain/tb" ] || fail "log.tensorboard false wrote $tmp/plain/tb"

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
