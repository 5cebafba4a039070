#!/usr/bin/env bash
# Data-parallel `ffnshape train` over Gloo on loopback, ranks started the way torchrun starts them
# (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), by torchrun itself and by the Slurm batch script: 2 ranks of micro-batch b equal 1 process of 2b (also
# with grad_accum 2, and with ZeRO-1), a 2-rank resume is bit-identical, checkpoints move between world sizes, and a
# rank that dies or hangs stops the other with a message naming it, and a locked run directory stops
# every rank at once. Environment: FFNSHAPE,
# CHECKPOINT_DIFF (tests/checkpoint_diff). Also an experiment whose runs train as 2 ranks.
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"

python3 - "$tmp" "$(dirname "$0")" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from llmc_shards import shard, text
shard(sys.argv[1] + "/train_0.bin", text(30000))
shard(sys.argv[1] + "/val_0.bin", text(5000))
PY
cat >"$tmp/dp.yaml" <<YAML
model: {vocab_size: 64, d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 32, ffn: {hidden: 64}}
data: {train: "$tmp/train_*.bin", val: "$tmp/val_*.bin"}
train: {seq_len: 32, micro_batch: 8, steps: 20, threads: 1, collective_timeout_s: 30}
optimizer: {lr: 3.0e-3, warmup_steps: 3}
eval: {every: 10, batches: 3}
checkpoint: {every: 10, keep: 3}
log: {every: 1}
YAML

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ranks N NAME ARGS...: `ffnshape train ARGS` as N ranks; output of rank r in $tmp/NAME.r; the exit
# code is the first non-zero one.
ranks() {
  local n=$1 name=$2 port
  shift 2
  port=$(free_port)
  local pids=()
  for ((r = 0; r < n; r++)); do
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 300 "$FFNSHAPE" train "$tmp/dp.yaml" "$@" >"$tmp/$name.$r" 2>&1 &
    pids+=($!)
  done
  local code=0 c
  for pid in "${pids[@]}"; do
    wait "$pid"
    c=$?
    [ "$code" -ne 0 ] || code=$c
  done
  return "$code"
}

# same_run A B TOLERANCE: training and validation losses of every step, and the final weights and
# AdamW moments, agree within TOLERANCE (0: bit for bit).
same_run() {
  python3 - "$tmp/$1" "$tmp/$2" "$3" <<'PY' || fail "$1 vs $2: losses differ"
import json, sys
def losses(run):
    out = {}
    for line in open(run + "/metrics.jsonl"):
        m = json.loads(line)
        for key in ("loss", "val_loss"):
            if key in m:
                out[(m["step"], key)] = m[key]
    return out
a, b, tol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
assert a.keys() == b.keys(), f"different steps logged: {sorted(a.keys() ^ b.keys())[:5]}"
worst = max(abs(a[k] - b[k]) for k in a)
print(f"{sys.argv[1].rsplit('/', 1)[1]} vs {sys.argv[2].rsplit('/', 1)[1]}: {len(a)} losses, largest difference {worst:.3g}")
sys.exit(0 if worst <= tol else 1)
PY
  local diff
  diff=$("$CHECKPOINT_DIFF" "$tmp/$1" "$tmp/$2") || { fail "checkpoint_diff $1 $2: $diff"; return; }
  echo "  final checkpoints: $diff"
  python3 -c "import sys; w, m = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if max(w, m) <= float(sys.argv[3]) else 1)" \
    "$(echo "$diff" | awk '{print $2}')" "$(echo "$diff" | awk '{print $4}')" "$3" || fail "$1 vs $2: $diff"
}

expect_ok() {  # NAME CODE: a launch that should have succeeded
  checks=$((checks + 1))
  if [ "$2" -ne 0 ]; then
    echo "FAIL: $1 exited $2"; failures=$((failures + 1))
    # the log is $tmp/NAME for one rank of a launch (exp5.0), $tmp/NAME.RANK for a whole launch
    for log in "$tmp/$1" "$tmp/$1".*; do [ -f "$log" ] && { echo "--- $log"; tail -n 20 "$log"; }; done
  fi
}

# 1. Two ranks of micro-batch 4 against one process of 8, with and without accumulation.
"$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/one" >"$tmp/one.log" 2>&1; expect_ok one $?
ranks 2 two --run-dir "$tmp/two" --set train.micro_batch=4 --set log.tensorboard=true; expect_ok two $?
same_run one two 1e-5
[ ! -s "$tmp/two.1" ] || fail "rank 1 printed: $(head -c 300 "$tmp/two.1")"
# One TensorBoard event file (rank 0's), holding metrics.jsonl's values.
venv_python=$(dirname "$0")/../.venv/bin/python
if "$venv_python" -c 'import tensorboard' 2>/dev/null; then
  "$venv_python" "$(dirname "$0")/tensorboard_check.py" "$tmp/two" || fail "TensorBoard events of the 2-rank run"
fi
python3 -c "import json,sys; s = json.load(open(sys.argv[1])); assert s['world_size'] == 2 and s['tokens_seen'] == 20 * 8 * 32, s" \
  "$tmp/two/summary.json" || fail "summary.json of the 2-rank run"
"$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/one_acc" --set train.grad_accum=2 >"$tmp/one_acc.log" 2>&1
expect_ok one_acc $?
ranks 2 two_acc --run-dir "$tmp/two_acc" --set train.micro_batch=4 --set train.grad_accum=2; expect_ok two_acc $?
same_run one_acc two_acc 1e-5

# ZeRO-1 (moments split over the ranks, buckets of 10 kB so that slices cut through parameters).
zero=(--set train.micro_batch=4 --set train.zero=1 --set train.bucket_mb=0.01)
ranks 2 zero --run-dir "$tmp/zero" "${zero[@]}"; expect_ok zero $?
same_run one zero 1e-5
ranks 2 zero_acc --run-dir "$tmp/zero_acc" "${zero[@]}" --set train.grad_accum=2; expect_ok zero_acc $?
same_run one_acc zero_acc 1e-5
# Its checkpoints hold the whole AdamW state: a 2-rank ZeRO run resumes bit for bit, and in 1 process.
ranks 2 zero_stop --run-dir "$tmp/zero_resumed" "${zero[@]}" --stop-at 10
ranks 2 zero_resume --run-dir "$tmp/zero_resumed" "${zero[@]}"; expect_ok zero_resume $?
same_run zero zero_resumed 0
ranks 2 zero_stop2 --run-dir "$tmp/zero_then_one" "${zero[@]}" --stop-at 10
"$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/zero_then_one" >"$tmp/zero_then_one.log" 2>&1
expect_ok zero_then_one $?
same_run one zero_then_one 1e-5

# 2. A 2-rank run stopped at step 10 and resumed equals the uninterrupted one bit for bit.
ranks 2 stop --run-dir "$tmp/resumed" --set train.micro_batch=4 --stop-at 10
[ -e "$tmp/resumed/checkpoints/step_00000010/DONE" ] || fail "no checkpoint at the stop"
ranks 2 resume --run-dir "$tmp/resumed" --set train.micro_batch=4; expect_ok resume $?
same_run two resumed 0

# 3. Checkpoints move between world sizes: 2 ranks -> 1 process, and 1 process -> 2 ranks.
ranks 2 stop2 --run-dir "$tmp/two_then_one" --set train.micro_batch=4 --stop-at 10
"$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/two_then_one" >"$tmp/two_then_one.log" 2>&1
expect_ok two_then_one $?
same_run one two_then_one 1e-5
"$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/one_then_two" --stop-at 10 >/dev/null 2>&1
ranks 2 one_then_two --run-dir "$tmp/one_then_two" --set train.micro_batch=4; expect_ok one_then_two $?
same_run one one_then_two 1e-5

# 4. A rank that dies (SIGKILL) or hangs (SIGSTOP): the other exits non-zero within its timeout and
# names it; the newest checkpoint stays complete.
lost_rank() {  # NAME SIGNAL
  local port pids=() start
  port=$(free_port)
  for r in 0 1; do  # no `timeout` wrapper: the signal must reach ffnshape itself
    RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$FFNSHAPE" train "$tmp/dp.yaml" \
      --run-dir "$tmp/$1" --set train.steps=100000 --set train.collective_timeout_s=5 >"$tmp/$1.$r" 2>&1 &
    pids+=($!)
  done
  # A hang fails the test instead of blocking it (no output: ctest would wait for the sleep).
  (sleep 120; kill -9 "${pids[@]}") >/dev/null 2>&1 &
  local watchdog=$!
  for _ in $(seq 100); do grep -q "step " "$tmp/$1.0" 2>/dev/null && break; sleep 0.2; done
  start=$(date +%s)
  kill "-$2" "${pids[1]}"
  wait "${pids[0]}"
  local code=$? took=$(($(date +%s) - start))
  kill -9 "${pids[1]}" 2>/dev/null; wait "${pids[1]}" 2>/dev/null
  kill "$watchdog" 2>/dev/null
  echo "  $1: rank 0 exited $code after ${took} s"
  checks=$((checks + 1))
  if [ "$code" -ne 1 ] || [ "$took" -gt 30 ]; then
    echo "FAIL: $1: rank 0 exited $code after $took s"; failures=$((failures + 1))
  fi
  contains "rank 1 stopped or hangs" "$(cat "$tmp/$1.0")" "$1: message names the lost rank"
  contains "fix:" "$(cat "$tmp/$1.0")" "$1: message says what to do"
  ! grep -q "frame #" "$tmp/$1.0" || fail "$1: a C++ backtrace in the message"
  local latest
  latest=$(ls -d "$tmp/$1"/checkpoints/step_* 2>/dev/null | grep -v tmp | tail -n 1)
  [ -z "$latest" ] || [ -e "$latest/DONE" ] || fail "$1: newest checkpoint $latest is incomplete"
}
lost_rank died KILL
lost_rank hung STOP

# A rank stopped (SIGTERM) while it waits for its peers to join: it ends within seconds, long before
# its 60 s join timeout, with exit 1 and the stop message, and trains nothing. Rank 0 waits as the
# store's host, rank 1 as a client connecting in 5 s attempts.
stopped_in_join() {  # RANK
  local pid took code start
  RANK=$1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) "$FFNSHAPE" train "$tmp/dp.yaml" \
    --run-dir "$tmp/join_stop$1" --set train.collective_timeout_s=60 >"$tmp/join_stop$1.out" 2>&1 &
  pid=$!
  (sleep 120; kill -9 "$pid") >/dev/null 2>&1 &
  local watchdog=$!
  sleep 3
  start=$(date +%s)
  kill -TERM "$pid"
  wait "$pid"
  code=$? took=$(($(date +%s) - start))
  kill "$watchdog" 2>/dev/null
  echo "  rank $1 stopped in the join: exited $code after ${took} s"
  checks=$((checks + 1))
  if [ "$code" -ne 1 ] || [ "$took" -gt 20 ]; then
    echo "FAIL: rank $1 stopped in the join exited $code after $took s"; failures=$((failures + 1))
  fi
  contains "was stopped (SIGINT / SIGTERM) while it waited for the other ranks to join" \
    "$(cat "$tmp/join_stop$1.out")" "rank $1: the stop message"
  ! grep -q "frame #" "$tmp/join_stop$1.out" || fail "rank $1 stopped in the join: a C++ backtrace"
  [ ! -e "$tmp/join_stop$1/checkpoints" ] || fail "rank $1 stopped in the join wrote checkpoints"
}
stopped_in_join 0
stopped_in_join 1

# 5. The real launchers: torchrun (from the project's venv, whose agent hosts the store) and
# scripts/slurm/train.sbatch run by bash with tests/fake_srun.sh as srun.
here=$(cd "$(dirname "$0")" && pwd)
sed 's/micro_batch: 8/micro_batch: 4/' "$tmp/dp.yaml" >"$tmp/dp4.yaml"
torchrun=$here/../.venv/bin/torchrun
if [ -x "$torchrun" ]; then
  expect 0 "torchrun" -- timeout 300 "$torchrun" --standalone --nproc_per_node=2 --no-python "$FFNSHAPE" train \
    "$tmp/dp4.yaml" --run-dir "$tmp/torchrun"
  same_run one torchrun 1e-5
else
  echo "  torchrun: skipped (no $torchrun; scripts/setup.sh installs it)"
fi
mkdir -p "$tmp/bin"
ln -s "$here/fake_srun.sh" "$tmp/bin/srun"
expect 0 "train.sbatch under srun" -- env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT PATH="$tmp/bin:$PATH" \
  SLURM_NTASKS=2 FFNSHAPE="$FFNSHAPE" timeout 300 bash "$here/../scripts/slurm/train.sbatch" "$tmp/dp4.yaml" "$tmp/slurm"
same_run one slurm 1e-5

# 6. An experiment started as 2 ranks trains every run data-parallel; rank 0 alone profiles (the
# other waits for it when the next run starts) and writes the report. Widths and losses as 1 process.
cat >"$tmp/exp.yaml" <<YAML
base: dp.yaml
set: [train.steps=30, eval.every=0, checkpoint.every=0]
seeds: [1]
budget: {reference: uniform}
profile: {arm: uniform, tokens: 64, ph_memory: 1}
arms:
  - name: uniform
  - name: topo
    schedule: topo:hyperbolic
YAML
sed 's/eval.every=0,/eval.every=0, train.micro_batch=4,/' "$tmp/exp.yaml" >"$tmp/exp4.yaml"
expect 0 "experiment, 1 process" -- "$FFNSHAPE" experiment "$tmp/exp.yaml" --run-root "$tmp/exp1"
port=$(free_port)
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 "$FFNSHAPE" experiment "$tmp/exp4.yaml" \
    --run-root "$tmp/exp2" >"$tmp/exp2.$r" 2>&1 &
done
wait %1; code0=$?
wait %2; code1=$?
expect_ok exp2.0 "$code0"
expect_ok exp2.1 "$code1"
python3 - "$tmp/exp1/results.csv" "$tmp/exp2/results.csv" <<'PY' || fail "the 2-rank experiment differs from the 1-process one"
import csv, sys
one, two = ({r["arm"]: r for r in csv.DictReader(open(p))} for p in sys.argv[1:3])
for arm in ("uniform", "topo"):
    assert one[arm]["ffn_widths"] == two[arm]["ffn_widths"], (arm, one[arm]["ffn_widths"], two[arm]["ffn_widths"])
    assert abs(float(one[arm]["val_loss"]) - float(two[arm]["val_loss"])) < 1e-4, arm
print("experiment as 2 ranks: widths", two["topo"]["ffn_widths"], "and losses as 1 process")
PY
[ -s "$tmp/exp2/report.md" ] || fail "the 2-rank experiment wrote no report"
! grep -q "budget" "$tmp/exp2.1" || fail "rank 1 printed the plan: $(head -c 300 "$tmp/exp2.1")"

# The ranks of an experiment wait for each other longer than a collective may take (rank 0 profiles
# and scores between runs): rank 0 arriving 8 s late with a 3 s collective timeout is no failure.
sed 's/eval.every=0,/eval.every=0, train.collective_timeout_s=3,/' "$tmp/exp4.yaml" >"$tmp/exp5.yaml"
port=$(free_port)
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 "$FFNSHAPE" experiment "$tmp/exp5.yaml" \
  --run-root "$tmp/exp5" >"$tmp/exp5.1" 2>&1 &
late_pid=$!
sleep 8
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 300 "$FFNSHAPE" experiment "$tmp/exp5.yaml" \
  --run-root "$tmp/exp5" >"$tmp/exp5.0" 2>&1
code0=$?
wait "$late_pid"; code1=$?
expect_ok exp5.0 "$code0"
expect_ok exp5.1 "$code1"

# 7. Launch mistakes: exit 2 and a message.
expect 2 "WORLD_SIZE=0" -- env RANK=0 WORLD_SIZE=0 "$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/bad"
contains "WORLD_SIZE" "$err" "WORLD_SIZE=0 message"
expect 2 "RANK >= WORLD_SIZE" -- env RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 "$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/bad"
contains "RANK" "$err" "RANK >= WORLD_SIZE message"
expect 2 "unreachable MASTER_ADDR" -- env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$(free_port)" \
  "$FFNSHAPE" train "$tmp/dp.yaml" --run-dir "$tmp/bad" --set train.collective_timeout_s=2
contains "could not join the job at 127.0.0.1" "$err" "unreachable MASTER_ADDR message"

# 8. A run directory another process is training into: rank 0 is refused its lock after the join and
# says so, and rank 1 learns it at once instead of waiting out the 30 s collective timeout.
mkdir -p "$tmp/locked"
flock "$tmp/locked/lock" sleep 120 &
holder=$!
sleep 0.5
ranks 2 locked --run-dir "$tmp/locked"
code=$?
kill "$holder" 2>/dev/null
[ "$code" -ne 0 ] || fail "a locked run directory was trained into"
contains "is being trained by another process" "$(cat "$tmp/locked.0")" "rank 0 names the lock"
contains "rank 0 could not start this run" "$(cat "$tmp/locked.1")" "rank 1 learns of rank 0's refusal"
[ ! -e "$tmp/locked/config.yaml" ] || fail "a refused run wrote its config"

finish "data parallel"
