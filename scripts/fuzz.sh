#!/usr/bin/env bash
# Coverage-guided fuzzing of ffnshape's file parsers (libFuzzer, ASan + UBSan; the targets are in
# tests/fuzz/, built into build-sanitize/ beside the sanitizer build; BUILD_DIR overrides).
#
#   bash scripts/fuzz.sh [TARGET|all] [SECONDS]   fuzz each target SECONDS (default 60), starting from
#                                                 its committed corpus; new inputs that add coverage
#                                                 are merged (minimised) back into tests/fuzz/corpus/;
#                                                 each run is logged in tests/fuzz/fuzz_log.tsv
#   bash scripts/fuzz.sh --smoke [SECONDS]        CI: each target SECONDS (default 5) on its corpus and
#                                                 regression inputs, seed 1, nothing written back
#   bash scripts/fuzz.sh --seed DIR               merge seed files DIR/<target>/* into the corpora
#                                                 (tests/fuzz/make_seeds.py DIR writes them)
#   bash scripts/fuzz.sh --minimise               rewrite each committed corpus as its smallest subset
#                                                 with the same coverage
#   bash scripts/fuzz.sh --summary                the log per target as a Markdown table: time
#                                                 fuzzed, executions, coverage, findings
#   bash scripts/fuzz.sh --list                   the targets
#
# A finding (crash, uncaught exception, leak, hang > 1 s, allocation > 2 GB) stops the target and
# leaves its input in build-sanitize/fuzz/findings/<target>/; the exit code is then 1. Copy the input
# to tests/fuzz/regressions/<target>/ once fixed: ctest replays it from then on.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-sanitize}
fuzz_dir=$root/tests/fuzz
targets=$(sed -n '/^set(ffnshape_fuzz_targets/,/)/p' "$fuzz_dir/CMakeLists.txt" | tr -d '()' | tr ' ' '\n' |
          grep '^fuzz_' || true)

mode=fuzz target=all seconds=60 seed_dir=""
case "${1:-}" in
  --smoke) mode=smoke; seconds=${2:-5} ;;
  --seed) mode=seed; seed_dir=${2:?"--seed needs a folder (python3 tests/fuzz/make_seeds.py DIR writes one)"} ;;
  --minimise) mode=minimise ;;
  --list) echo "$targets"; exit 0 ;;
  --summary) exec python3 "$fuzz_dir/fuzz_summary.py" "$fuzz_dir/fuzz_log.tsv" ;;
  -h|--help) sed -n "2,23p" "$0"; exit 0 ;;
  "") ;;
  *) target=$1; seconds=${2:-60} ;;
esac
if [ "$target" != all ] && ! grep -qx "$target" <<<"$targets"; then
  echo "fuzz: no target '$target'" >&2
  echo "  fix: one of: $(echo $targets)" >&2
  exit 2
fi
[ "$target" = all ] && selected=$targets || selected=$target

# Under a lock, so that several fuzz.sh at once (one per core) do not build into one folder together.
mkdir -p "$build"
flock "$build/.fuzz-build.lock" env BUILD_DIR="$build" BUILD_TARGETS="$(echo $selected)" \
  bash "$root/scripts/sanitize.sh" --build >"$build/fuzz-build.log" 2>&1 ||
  { tail -30 "$build/fuzz-build.log" >&2; echo "fuzz: the build failed (log $build/fuzz-build.log)" >&2; exit 2; }

# What the sanitizers report, and which of LibTorch's and the other libraries' reports are ignored.
source "$root/scripts/sanitizer_env.sh"
# The targets write each input to a file: in memory where there is a tmpfs, so that a disk busy with a
# build beside the fuzzer does not stall a write past the 1 s hang limit (seen once: a 3 ms input).
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
work=$build/fuzz
mkdir -p "$work"
status=0
for t in $selected; do
  corpus=$fuzz_dir/corpus/$t
  mkdir -p "$corpus" "$work/findings/$t"
  # Each format's keywords (tests/fuzz/dict/), so mutations speak the format.
  case $t in
    fuzz_gguf) format=gguf ;;
    fuzz_shard) format=shard ;;
    fuzz_run_config) format=yaml ;;
    fuzz_parquet) format=parquet ;;
    fuzz_hf_tokenizer_text) format="" ;;
    *) format=json ;;
  esac
  dict=()
  [ -n "$format" ] && dict=(-dict="$fuzz_dir/dict/$format.dict")
  common=(-timeout=1 -rss_limit_mb=2560 -malloc_limit_mb=2048 -max_len=65536 "${dict[@]}"
          -artifact_prefix="$work/findings/$t/")
  case $mode in
    seed)
      if [ $t = fuzz_checkpoint ]; then  # it writes its own seeds: a valid checkpoint's four files
        empty=$(mktemp -d)
        FFNSHAPE_FUZZ_WRITE_SEEDS=$seed_dir/$t "$build/tests/fuzz/$t" -runs=0 "$empty" >/dev/null 2>&1
        rmdir "$empty"
      fi
      [ -d "$seed_dir/$t" ] || continue
      "$build/tests/fuzz/$t" -merge=1 -use_counters=0 "${common[@]}" "$corpus" "$seed_dir/$t" >"$work/$t.seed.log" 2>&1 ||
        { echo "fuzz: $t: merging seeds failed, see $work/$t.seed.log" >&2; status=1; continue; }
      echo "fuzz: $t: corpus $(ls "$corpus" | wc -l) files" ;;
    minimise)
      minimal=$(mktemp -d)
      "$build/tests/fuzz/$t" -merge=1 -use_counters=0 "${common[@]}" "$minimal" "$corpus" >"$work/$t.minimise.log" 2>&1 ||
        { echo "fuzz: $t: minimising failed, see $work/$t.minimise.log" >&2; rm -rf "$minimal"; status=1; continue; }
      rm -rf "$corpus" && mv "$minimal" "$corpus"
      echo "fuzz: $t: corpus $(ls "$corpus" | wc -l) files, $(du -sb "$corpus" | cut -f1) bytes" ;;
    smoke)
      inputs=("$corpus")
      [ -d "$fuzz_dir/regressions/$t" ] && inputs+=("$fuzz_dir/regressions/$t")
      scratch=$(mktemp -d)
      # A fixed seed: the same mutations on every run, so CI is not failed by chance by a new find.
      if "$build/tests/fuzz/$t" "${common[@]}" -seed=1 -max_total_time="$seconds" -print_final_stats=1 \
           "$scratch" "${inputs[@]}" >"$work/$t.smoke.log" 2>&1; then
        echo "fuzz: $t: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t.smoke.log" |
                           grep -o '[0-9]*$') runs in ${seconds} s, clean"
      else
        echo "fuzz: $t: FINDING, see $work/$t.smoke.log" >&2
        tail -40 "$work/$t.smoke.log" >&2
        status=1
      fi
      rm -rf "$scratch" ;;
    fuzz)
      # New inputs go to a working copy; what adds coverage is merged back, minimised. Coverage here
      # means edges (-use_counters=0), not hit counts: a corpus a third the size, the same edges.
      fresh=$work/new/$t
      rm -rf "$fresh" && mkdir -p "$fresh"
      log=$work/$t.log
      echo "fuzz: $t for $seconds s (log $log)"
      result=clean started=$(date +%s)
      "$build/tests/fuzz/$t" "${common[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        "$fresh" "$corpus" >"$log" 2>&1 || { result=finding; status=1; }
      elapsed=$(( $(date +%s) - started ))  # what ran: a finding stops the target early
      runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
      cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | awk '{print $2 "\t" $4}')
      "$build/tests/fuzz/$t" -merge=1 -use_counters=0 "${common[@]}" "$corpus" "$fresh" >"$work/$t.merge.log" 2>&1 || true
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%F)" "$t" "$elapsed" "$runs" "$cov" \
        "$(ls "$corpus" | wc -l)" "$result" >>"$fuzz_dir/fuzz_log.tsv"
      echo "fuzz: $t: $runs runs, cov/ft $(echo $cov), corpus $(ls "$corpus" | wc -l) files, $result"
      [ $result = clean ] || tail -40 "$log" >&2 ;;
  esac
done
exit $status
