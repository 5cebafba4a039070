#!/usr/bin/env bash
# c10d through ffnshape::ProcessGroup: two ranks over loopback (Gloo) agree on an all-reduce and a
# broadcast; a rank whose peer never arrives stops within its timeout with a message, not a hang.
set -euo pipefail
rank_bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 "$rank_bin" 30000 >"$tmp/out$r" 2>&1 &
done
wait %1 || fail "rank 0: $(cat "$tmp/out0")"
wait %2 || fail "rank 1: $(cat "$tmp/out1")"
# all-reduce of 1 and 2 is 3 on both; the broadcast is 0 + 1 + 2 + 3 = 6 on both.
grep -qx "rank 0 of 2: sum 3, broadcast 6" "$tmp/out0" || fail "rank 0 printed: $(cat "$tmp/out0")"
grep -qx "rank 1 of 2: sum 3, broadcast 6" "$tmp/out1" || fail "rank 1 printed: $(cat "$tmp/out1")"

# Data parallelism's two collectives: rank 0's weights everywhere; gradients averaged across ranks in
# several buckets: mean of 1x and 2x (1..15) sums to 1.5 * 120 = 180 for the weight, 1.5 * 6 = 9 for the bias.
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 "$rank_bin" 30000 grads >"$tmp/grads$r" 2>&1 &
done
wait %1 || fail "rank 0 (grads): $(cat "$tmp/grads0")"
wait %2 || fail "rank 1 (grads): $(cat "$tmp/grads1")"
initial=$(sed -n 's/^rank 0 initial weights //p' "$tmp/grads0")
[ -n "$initial" ] || fail "rank 0 printed no initial weights: $(cat "$tmp/grads0")"
for r in 0 1; do
  grep -qx "rank $r weights $initial grads 180 9" "$tmp/grads$r" || fail "rank $r (initial $initial): $(cat "$tmp/grads$r")"
done

# Rank 1 first reaches a store that then closes (the job rank 0 is still finishing on this port, as
# between an experiment's runs): it connects again and joins rank 0's next store.
python=$(dirname "$0")/../.venv/bin/python
if "$python" -c 'import torch.distributed' 2>/dev/null; then
  "$python" -c 'import sys, time, datetime, torch.distributed as d
s = d.TCPStore("127.0.0.1", int(sys.argv[1]), 2, True, datetime.timedelta(seconds=30), wait_for_workers=False)
time.sleep(3)' "$port" &
  old_store=$!
  sleep 1
  RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 "$rank_bin" 30000 >"$tmp/again1" 2>&1 &
  late=$!
  wait "$old_store"
  sleep 1
  RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 "$rank_bin" 30000 >"$tmp/again0" 2>&1 &
  first=$!
  wait "$late" || fail "rank 1 after a closed store: $(cat "$tmp/again1")"
  wait "$first" || fail "rank 0 after a closed store: $(cat "$tmp/again0")"
  grep -qx "rank 1 of 2: sum 3, broadcast 6" "$tmp/again1" || fail "rank 1 printed: $(cat "$tmp/again1")"
  ! grep -q "frame #" "$tmp/again1" || fail "a C++ backtrace from the lost store: $(head -c 600 "$tmp/again1")"
else
  echo "skipped the closed-store case: $python has no torch.distributed"
fi

# Rank 1 never starts: rank 0 must give up after its 3 s timeout with a message naming itself.
start=$(date +%s)
set +e
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 "$rank_bin" 3000 >"$tmp/lonely" 2>&1
code=$?
set -e
[ "$code" = 1 ] || fail "a rank without its peer exited $code (124 = hung until killed): $(cat "$tmp/lonely")"
grep -q "rank 0 of 2 could not join the job at 127.0.0.1:$port" "$tmp/lonely" || fail "message: $(cat "$tmp/lonely")"
grep -q "fix: check that every rank was started" "$tmp/lonely" || fail "no fix line: $(cat "$tmp/lonely")"
! grep -q "frame #" "$tmp/lonely" || fail "a C++ backtrace in the message: $(cat "$tmp/lonely")"
# Rank 1 joins, then dies: rank 0's all-reduce fails with a message naming rank 0 (not a hang).
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port timeout 120 "$rank_bin" 5000 leave >"$tmp/left$r" 2>&1 &
done
set +e
wait %1; code=$?
wait %2
set -e
[ "$code" = 1 ] || fail "the survivor of a lost rank exited $code (124 = hung until killed): $(cat "$tmp/left0")"
grep -q "all-reduce failed on rank 0 of 2" "$tmp/left0" || fail "message: $(cat "$tmp/left0")"
! grep -q "frame #" "$tmp/left0" || fail "a C++ backtrace in the message: $(cat "$tmp/left0")"

echo "process group: 2 ranks agree; a lonely rank stopped after $(($(date +%s) - start)) s"
