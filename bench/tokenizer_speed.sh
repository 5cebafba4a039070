#!/usr/bin/env bash
# Tokenizer encoding throughput: ffnshape's tokenizer.json reader (bench_tokenizer_speed: encode_batch
# over every document) against Hugging Face tokenizers (Tokenizer.encode_batch_fast, else encode_batch;
# add_special_tokens=False,
# with RAYON_NUM_THREADS threads), one thread and all threads, on the default corpus (data/bigtxt/text,
# fetched by scripts/fetch_corpus.sh when absent) with SmolLM2's tokenizer (rebuilt from its GGUF file
# by transformers) and, with --all, the GPT-2- and Llama-3-style tokenizers of the tests. Best of
# --repeats runs per side; both sides must produce the same number of tokens. Builds nothing.
#
#   bash bench/tokenizer_speed.sh [--repeats 5] [--threads N] [--all]
#
# Environment: BENCH (default build/bench_tokenizer_speed), PYTHON (default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/bench_tokenizer_speed}
PYTHON=${PYTHON:-.venv/bin/python}
repeats=5 threads=$(nproc) all=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --all) all=1; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BENCH" ]] || { echo "error: $BENCH is not an executable; build it (target bench_tokenizer_speed) or set BENCH" >&2; exit 2; }
"$PYTHON" tests/hf_tokenizer_reference.py check >&2 || { echo "error: bash scripts/setup.sh installs them" >&2; exit 2; }
corpus=data/bigtxt/text
[[ -f "$corpus/.complete" ]] || bash scripts/fetch_corpus.sh "$corpus" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1

# The tokenizer.json files: SmolLM2's always, the trained ones with --all.
"$PYTHON" - "$tmp" "$all" "$corpus" <<'PY'
import sys
sys.path.insert(0, "tests")
import hf_tokenizer_reference as ref
out, build_all, corpus = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
ref.build_smollm2(out)
if build_all:
    ref.build_gpt2(out, corpus, [])
    ref.build_split_regex(out, corpus, [], "llama3", ref.LLAMA3_PATTERN,
                          ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"], nfc=False)
PY
names=(smollm2)
[[ $all == 1 ]] && names+=(gpt2 llama3)

reference() {  # reference TOKENIZER_JSON THREADS -> "tokens N mb_per_s M"
  RAYON_NUM_THREADS=$2 "$PYTHON" - "$1" "$corpus" "$repeats" <<'PY'
import glob, os, sys, time
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
texts = [open(f, encoding="utf-8").read() for f in sorted(glob.glob(os.path.join(sys.argv[2], "*.txt")))]
size = sum(len(t.encode("utf-8")) for t in texts)
best = float("inf")
# The fastest batch encoder tokenizers has: encode_batch_fast (no character offsets) where it exists.
encode = getattr(tok, "encode_batch_fast", tok.encode_batch)
for _ in range(int(sys.argv[3])):
    start = time.perf_counter()
    encodings = encode(texts, add_special_tokens=False)
    best = min(best, time.perf_counter() - start)
print(f"tokens {sum(len(e.ids) for e in encodings)} mb_per_s {size / best / 1e6:.2f}")
PY
}

echo "tokenizer encoding on $corpus ($(cat "$corpus"/*.txt | wc -c) bytes, $(ls "$corpus"/*.txt | wc -l) documents), best of $repeats; $(nproc) CPUs"
printf "%-10s %8s %15s %17s %8s\n" tokenizer threads "ffnshape MB/s" "tokenizers MB/s" ratio
for name in "${names[@]}"; do
  for t in $(printf "%s\n" 1 "$threads" | sort -un); do
    read -r _ _ _ _ _ ours_tokens _ _ _ ours <<<"$("$BENCH" "$tmp/$name/tokenizer.json" "$corpus" "$t" "$repeats")"
    read -r _ theirs_tokens _ theirs <<<"$(reference "$tmp/$name/tokenizer.json" "$t")"
    [[ "$ours_tokens" == "$theirs_tokens" ]] ||
      { echo "error: $name: ffnshape made $ours_tokens tokens, tokenizers $theirs_tokens" >&2; exit 1; }
    printf "%-10s %8s %15s %17s %7.1fx\n" "$name" "$t" "$ours" "$theirs" "$(echo "$ours / $theirs" | bc -l)"
  done
done
