#!/usr/bin/env bash
# ffnshape's library, tool and unit tests built with AddressSanitizer and UndefinedBehaviorSanitizer
# (Clang, build-sanitize/; BUILD_DIR overrides), and the unit tests run under them. LibTorch and the
# other libraries are not instrumented (tests/sanitizers/ lists what is ignored in them, and why).
#
#   bash scripts/sanitize.sh            build, then the sanitizer suite (what CI runs, about 5 min on 2 cores):
#                                       every unit test that does not need SentencePiece, the tokenizer.json
#                                       reference on six tokenizers, SmolLM2's GGUF import against
#                                       transformers, and the replay of every fuzz corpus
#   bash scripts/sanitize.sh --unit [GTEST_FILTER]   build, then the unit tests only
#   bash scripts/sanitize.sh --build    build only (BUILD_TARGETS="a b" narrows it)
#
# SentencePiece cannot be loaded under AddressSanitizer (src/train/tokenizer.cpp says why), so the
# tests that train or load a SentencePiece model are left out (the list below).
# The same build holds the libFuzzer targets (scripts/fuzz.sh): one instrumented build serves both.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-sanitize}

# The unit tests that need SentencePiece (they train or load a tokenizer.model).
needs_sentencepiece='Tokenizer.*:Prepare.*:PrepareCorpus.*:MultipleChoice.PairsAreEncodedTogetherWithTrailingSpacesMoved'
needs_sentencepiece+=':MultipleChoice.LogLikelihoodIsTheModelsCrossEntropyOnTheContinuation'
# The ctest entries that run under the sanitizers: tools built here, no SentencePiece.
ctest_entries='^(hf_tokenizer_reference|cli_gguf_smollm2|fuzz_replay_.*)$'

mode=suite filter="*"
case "${1:-}" in
  --unit) mode=unit filter=${2:-*} ;;
  --build) mode=build ;;
  -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
  "") ;;
  *) echo "sanitize: unknown argument '$1'" >&2; echo "  fix: see bash scripts/sanitize.sh --help" >&2; exit 2 ;;
esac

for tool in clang clang++; do
  command -v $tool >/dev/null || {
    echo "sanitize: $tool is missing"; echo "  fix: bash scripts/setup.sh (installs clang and libclang-rt-dev)"; exit 2; } >&2
done
# -O1 with line tables: symbolised reports at a compile time close to a release build's.
BUILD_DIR=$build BUILD_TARGETS="${BUILD_TARGETS:-ffnshape_cli ffnshape_tests model_probe hf_tokenizer_probe fuzz_targets}" bash "$root/scripts/build.sh" \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DFFNSHAPE_SANITIZE=address,undefined -DFFNSHAPE_FUZZ=ON -DFFNSHAPE_BUILD_BENCH=OFF
[ $mode = build ] && exit 0

source "$root/scripts/sanitizer_env.sh"
started=$(date +%s)
"$build/tests/ffnshape_tests" --gtest_filter="$filter-$needs_sentencepiece" --gtest_brief=1
echo "sanitize: unit tests clean under ASan + UBSan ($(( $(date +%s) - started )) s)"
[ $mode = unit ] && exit 0
started=$(date +%s)
(cd "$build" && ctest --output-on-failure --timeout 900 -R "$ctest_entries")
echo "sanitize: $ctest_entries clean under ASan + UBSan ($(( $(date +%s) - started )) s)"
