#!/usr/bin/env bash
# `ffnshape data prepare` on real corpus formats, end to end: the same documents as .txt files,
# .jsonl, .jsonl.gz, .jsonl.zst and .parquet give byte-identical shards; bad inputs exit 2 naming the
# file and line / row group (or are counted with --skip-bad); a prepare killed mid-way and run again
# equals an uninterrupted one; --max-tokens and --dedup are reported in meta.json.
# Environment: FFNSHAPE (the binary), PYTHON (optional: a Python with pyarrow, for the Parquet part).
set -uo pipefail
: "${FFNSHAPE:?FFNSHAPE must name the ffnshape binary}"
source "$(dirname "$0")/cli_lib.sh"
PYTHON=${PYTHON:-python3}
cd "$tmp" || exit 1

python3 - <<'PY'
import gzip, json, os, random
random.seed(3)
words = "the cat sat on a mat and dog ran far away home with some text here".split()
os.makedirs("txt")
docs = []
for d in range(300):
    text = " ".join(random.choice(words) for _ in range(random.randint(5, 80)))
    if d % 7 == 0:
        text += "\nsecond line ünïcödé"
    docs.append(text)
    open(f"txt/doc{d:04d}.txt", "w").write(text)
with open("c.jsonl", "w") as f:
    for text in docs:
        f.write(json.dumps({"id": 1, "text": text}) + "\n\n")  # blank lines are not documents
with gzip.open("c.jsonl.gz", "wt") as f:
    for text in docs:
        f.write(json.dumps({"body": text}) + "\n")
# A bigger corpus with exact duplicates, for resume, --dedup and --max-tokens.
big = [" ".join(random.choice(words) for _ in range(random.randint(3, 40))) for _ in range(4000)]
big += big[:500]
random.shuffle(big)
with open("big.jsonl", "w") as f:
    for text in big:
        f.write(json.dumps({"text": text}) + "\n")
with open("bad.jsonl", "w") as f:
    f.write('{"text": "fine"}\n{"text": "also fine"}\nnot json\n{"content": "x"}\n{"text": 5}\n')
PY
zstd -q c.jsonl -o c.jsonl.zst && zstd -q big.jsonl -o big.jsonl.zst
head -c 300 big.jsonl.zst > truncated.jsonl.zst
gzip -c big.jsonl | head -c 300 > truncated.jsonl.gz

split=(--val-fraction 0.1 --seed 1 --shard-tokens 5000 --threads 2)
expect 0 "prepare .txt files (trains the tokenizer)" -- "$FFNSHAPE" data prepare --input txt --out o_txt --vocab-size 300 "${split[@]}"
tok=o_txt/tokenizer.model
expect 0 "prepare .txt with the tokenizer" -- "$FFNSHAPE" data prepare --input txt --out ref --tokenizer $tok "${split[@]}"
same_shards() {  # same_shards DIR DESCRIPTION
  local n=0
  for shard in ref/*.bin; do
    n=$((n + 1))
    cmp -s "$shard" "$1/$(basename "$shard")" || { fail "$2: $(basename "$shard") differs"; return; }
  done
  [ "$(ls "$1"/*.bin | wc -l)" -eq "$n" ] || fail "$2: another number of shards"
  checks=$((checks + 1))
}
same_shards o_txt "trained tokenizer vs given"
for input in c.jsonl c.jsonl.zst "c.jsonl.gz --text-field body"; do
  expect 0 "prepare $input" -- "$FFNSHAPE" data prepare --input $input --out "o_${input%% *}" --tokenizer $tok "${split[@]}"
  same_shards "o_${input%% *}" "$input vs .txt"
done
if "$PYTHON" -c 'import pyarrow' 2>/dev/null; then
  "$PYTHON" -c "
import json, pyarrow as pa, pyarrow.parquet as pq
docs = [json.loads(l)['text'] for l in open('c.jsonl') if l.strip()]
pq.write_table(pa.table({'text': docs}), 'c.parquet', row_group_size=64)
pq.write_table(pa.table({'body': ['x']}), 'nocol.parquet')"
  expect 0 "prepare .parquet" -- "$FFNSHAPE" data prepare --input c.parquet --out o_parquet --tokenizer $tok "${split[@]}"
  same_shards o_parquet ".parquet vs .txt"
  expect 2 "a Parquet file without the column" -- "$FFNSHAPE" data prepare --input nocol.parquet --out o_bad --tokenizer $tok
  contains 'nocol.parquet: has no column "text"' "$err" "missing column named"
else
  echo "skip: no pyarrow in $PYTHON (Parquet part)"
fi

# Bad input: exit 2 with the file and line, or counted with --skip-bad.
expect 2 "a line that is not JSON" -- "$FFNSHAPE" data prepare --input bad.jsonl --out o_bad --tokenizer $tok
contains "bad.jsonl line 3: is not valid JSON" "$err" "bad line named"
expect 2 "a missing text field" -- "$FFNSHAPE" data prepare --input bad.jsonl --out o_bad --tokenizer $tok --text-field body
contains 'bad.jsonl line 1: has no field "body"' "$err" "missing field named"
expect 2 "a truncated .zst" -- "$FFNSHAPE" data prepare --input truncated.jsonl.zst --out o_bad --tokenizer $tok
contains "truncated.jsonl.zst: ends in the middle of a zstd frame" "$err" "truncated zst named"
expect 2 "a truncated .gz" -- "$FFNSHAPE" data prepare --input truncated.jsonl.gz --out o_bad --tokenizer $tok
contains "truncated.jsonl.gz: ends in the middle of the compressed data" "$err" "truncated gz named"
[ -e o_bad/meta.json ] && fail "a failed prepare left a meta.json"
expect 0 "--skip-bad" -- "$FFNSHAPE" data prepare --input bad.jsonl truncated.jsonl.gz --out o_skip --tokenizer $tok --val-fraction 0 --skip-bad
contains "skipped 3 document(s) and 1 file(s)" "$out" "skip counts"
python3 -c "import json,sys; m=json.load(open('o_skip/meta.json')); sys.exit(m['skipped']['documents']!=3 or m['skipped']['files']!=1 or m['documents']['train']<2)" ||
  fail "meta.json skip counts"

# Resume: killed mid-way (at a fixed document, and with a real kill -9), then run again.
big=(--input big.jsonl.zst --tokenizer $tok --val-fraction 0.05 --seed 2 --shard-tokens 7000 --dedup --threads 2)
expect 0 "uninterrupted prepare" -- "$FFNSHAPE" data prepare "${big[@]}" --out full
(FFNSHAPE_PREPARE_CHECKPOINT_EVERY=700 FFNSHAPE_PREPARE_STOP_AFTER=2600 "$FFNSHAPE" data prepare "${big[@]}" --out killed; true) >/dev/null 2>&1
[ -e killed/meta.json ] && fail "a killed prepare wrote meta.json"
ls killed/*.partial >/dev/null 2>&1 || fail "a killed prepare left no partial shard"
expect 0 "rerun after the kill" -- "$FFNSHAPE" data prepare "${big[@]}" --out killed
contains "continued an interrupted prepare" "$out" "resumed"
for shard in full/*.bin; do cmp -s "$shard" "killed/$(basename "$shard")" || fail "resumed $(basename "$shard") differs"; done
cmp -s full/meta.json killed/meta.json || fail "resumed meta.json differs"
FFNSHAPE_PREPARE_CHECKPOINT_EVERY=300 "$FFNSHAPE" data prepare "${big[@]}" --out kill9 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -e kill9/.prepare-state.json ] && ls kill9/train_*.bin >/dev/null 2>&1 && break; sleep 0.05; done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
expect 0 "rerun after kill -9" -- "$FFNSHAPE" data prepare "${big[@]}" --out kill9
for shard in full/*.bin; do cmp -s "$shard" "kill9/$(basename "$shard")" || fail "after kill -9: $(basename "$shard") differs"; done
cmp -s full/meta.json kill9/meta.json || fail "after kill -9: meta.json differs"

# --dedup and --max-tokens in meta.json.
python3 -c "
import json,sys; m=json.load(open('full/meta.json')); texts=[json.loads(l)['text'] for l in open('big.jsonl')]
sys.exit(m['duplicate_documents']!=len(texts)-len(set(texts)) or not m['dedup'])" || fail "meta.json: duplicates"
expect 0 "--max-tokens" -- "$FFNSHAPE" data prepare --input big.jsonl --out capped --tokenizer $tok --max-tokens 20000
python3 -c "
import json,sys; m=json.load(open('capped/meta.json')); t=m['tokens']['train']+m['tokens']['val']
sys.exit(not (m['max_tokens']==20000 and m['max_tokens_reached'] and 19000 < t <= 20000))" || fail "meta.json: max_tokens"
finish cli_data
