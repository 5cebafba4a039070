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

finish() {
  echo "$1: $((checks - failures)) passed, $failures failed"
  [ "$failures" -eq 0 ]
}
