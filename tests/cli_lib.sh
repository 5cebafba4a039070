#!/usr/bin/env bash
# Helpers shared by the CLI end-to-end scripts: run a command, check its exit code and output.
# Sourcing scripts get $tmp (removed on exit), expect, contains, and a summary line from finish.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

# expect CODE DESCRIPTION -- COMMAND...: runs the command, keeps stdout/stderr in $out/$err.
expect() {
  local code=$1 what=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
  checks=$((checks + 1))
  if [ "$got" -ne "$code" ]; then
    echo "FAIL: $what: exit $got, expected $code"
    echo "  stdout: ${out:0:400}"
    echo "  stderr: ${err:0:400}"
    failures=$((failures + 1))
  fi
}

# contains TEXT HAYSTACK DESCRIPTION
contains() {
  checks=$((checks + 1))
  if [[ "$2" != *"$1"* ]]; then
    echo "FAIL: $3: output lacks '$1'"
    echo "  got: ${2:0:600}"
    failures=$((failures + 1))
  fi
}

# fail DESCRIPTION: records a failed check made by the caller.
fail() {
  checks=$((checks + 1))
  echo "FAIL: $1"
  failures=$((failures + 1))
}

# stopped_when WHEN LOG DESCRIPTION -- COMMAND...: runs the command in the background (output in LOG)
# until WHEN holds (60 s at most): a file matches the glob WHEN, or, for WHEN = log:TEXT, LOG holds
# TEXT. Then sends it SIGTERM and expects exit 1 (stopped, its checkpoint saved).
stopped_when() {
  local when=$1 log=$2 what=$3 pid code
  shift 4
  "$@" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    if [[ "$when" == log:* ]]; then
      grep -qF "${when#log:}" "$log" 2>/dev/null && break
    else
      compgen -G "$when" >/dev/null && break
    fi
    sleep 0.02
  done
  kill -TERM "$pid"
  wait "$pid"
  code=$?
  checks=$((checks + 1))
  [ "$code" -eq 1 ] || { echo "FAIL: $what exited $code, expected 1"; failures=$((failures + 1)); }
}

finish() {
  echo "$1: $((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}
