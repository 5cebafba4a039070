#!/usr/bin/env bash
# ffnshape's tokenizer.json reader against the tokenizers package: tests/hf_tokenizer_reference.py
# builds GPT-2-style (also with a prefix space and single_word / lstrip / rstrip added tokens),
# Llama-3-style (Split regex, ignore_merges, BOS template) and Qwen2-style (NFC) tokenizers trained on
# the default corpus, and SmolLM2's real vocabulary from its GGUF file through transformers; the probe
# encodes every document of the default corpus and a hostile text set with each, and the ids, the
# decodes, decode(encode(x)) == x and the special ids must be the reference's.
# Environment: PROBE (tests/hf_tokenizer_probe.cpp), SOURCE_DIR, PYTHON (the venv's python).
# The corpus is data/bigtxt/text, fetched by scripts/fetch_corpus.sh when absent. Exit 77: no reference.
set -uo pipefail
ref="$SOURCE_DIR/tests/hf_tokenizer_reference.py"
[ -x "${PYTHON:-}" ] || { echo "SKIP: no Python at '${PYTHON:-}' (run scripts/setup.sh for the project's venv)"; exit 77; }
"$PYTHON" "$ref" check || exit 77
corpus="$SOURCE_DIR/data/bigtxt/text"
if [ ! -f "$corpus/.complete" ]; then
  (cd "$SOURCE_DIR" && bash scripts/fetch_corpus.sh data/bigtxt/text) ||
    { echo "SKIP: the default corpus could not be fetched (scripts/fetch_corpus.sh)"; exit 77; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1
names=$("$PYTHON" "$ref" build "$tmp" "$corpus") || { echo "FAIL: building the reference tokenizers"; exit 1; }
failures=0
for name in $names; do
  if ! "$PROBE" "$tmp/$name/tokenizer.json" "$tmp/texts.bin" "$tmp/$name.ours"; then
    echo "FAIL: $name: the probe failed"
    failures=$((failures + 1))
    continue
  fi
  "$PYTHON" "$ref" compare "$tmp" "$name" "$tmp/$name.ours" || failures=$((failures + 1))
done
[ "$failures" -eq 0 ] && echo "hf_tokenizer_reference: all tokenizers agree" || echo "hf_tokenizer_reference: $failures tokenizers differ"
[ "$failures" -eq 0 ]
