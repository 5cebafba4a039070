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
