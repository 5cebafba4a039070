#!/usr/bin/env bash
# `ffnshape import` and `ffnshape export` against transformers: folders saved by transformers import
# with the Python model's logits; trained ffnshape models export, load in transformers with the same
# logits, and import back identical; malformed folders are refused with exit 2 and the name.
# Environment: FFNSHAPE, MODEL_PROBE (tests/model_probe.cpp), PYTHON (the venv's python).
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"
here=$(dirname "$0")
ref() { "$PYTHON" "$here/hf_reference.py" "$@"; }
[ -x "${PYTHON:-}" ] || { echo "SKIP: no Python at '${PYTHON:-}' (run scripts/setup.sh for the project's venv)"; exit 77; }
ref check || exit 77
export TRANSFORMERS_VERBOSITY=error HF_HUB_OFFLINE=1
ids=3,17,42,5,88,1,64,23,9,77,31,2,50,95,12,0

# same_logits DESCRIPTION RUN HF_DIR [TOL]: ffnshape's logits of RUN against transformers' of HF_DIR.
same_logits() {
  "$MODEL_PROBE" logits "$2" "$ids" >"$tmp/ours.json" || { fail "$1: model_probe"; return; }
  ref logits "$3" "$ids" >"$tmp/theirs.json" 2>"$tmp/ref.err" || { fail "$1: transformers: $(tail -3 "$tmp/ref.err")"; return; }
  local verdict
  verdict=$(ref compare "$tmp/ours.json" "$tmp/theirs.json" "${4:-1e-4}") || fail "$1: logits differ: $verdict"
  echo "  $1: $verdict"
}

# 1. Folders written by transformers' save_pretrained.
for name in llama_gqa llama_tied_llama3 llama_head_dim olmo2_gqa olmo2_tied; do
  ref make "$tmp/hf_$name" "$name" >/dev/null 2>&1 || fail "save_pretrained of $name"
  expect 0 "import $name" -- "$FFNSHAPE" import "$tmp/hf_$name" --out "$tmp/run_$name"
  contains "run directory" "$out" "import summary of $name"
  echo "  import $name: $(grep -o 'in [0-9.e-]* s' <<<"$out")"
  same_logits "transformers -> ffnshape, $name" "$tmp/run_$name" "$tmp/hf_$name"
done
# The older config layout: rope_theta at the top level, rope_scaling {type: llama3}.
cp -r "$tmp/hf_llama_tied_llama3" "$tmp/hf_old" && ref old_style "$tmp/hf_old"
expect 0 "import of the older rope layout" -- "$FFNSHAPE" import "$tmp/hf_old" --out "$tmp/run_old"
"$MODEL_PROBE" diff "$tmp/run_old" "$tmp/run_llama_tied_llama3" >"$tmp/diff" || fail "model_probe diff (old layout)"
contains "max_abs_diff 0" "$(cat "$tmp/diff")" "older rope layout gives the same model"
same_logits "older rope layout" "$tmp/run_old" "$tmp/hf_llama_tied_llama3"
grep -q "rope_scaling:" "$tmp/run_old/config.yaml" || fail "llama3 scaling kept in config.yaml"

# An imported run is an ordinary run: eval reads it; bf16 import runs too.
python3 - "$tmp" "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from llmc_shards import shard, text
shard(sys.argv[1] + "/train_0.bin", text(20000))
shard(sys.argv[1] + "/val_0.bin", text(4000))
PY
expect 0 "eval of an imported run" -- "$FFNSHAPE" eval "$tmp/run_olmo2_gqa" --data "$tmp/val_0.bin" --batches 2
contains "val_loss" "$out" "eval output"
expect 0 "profile of an imported run" -- "$FFNSHAPE" profile "$tmp/run_llama_gqa" --out "$tmp/profile.json" \
  --data "$tmp/val_0.bin" --tokens 64 --stats shift,gw --geometries raw --threads 1
[ -s "$tmp/profile.json" ] || fail "profile of an imported run wrote nothing"
expect 0 "import as bf16" -- "$FFNSHAPE" import "$tmp/hf_llama_gqa" --out "$tmp/run_bf16" --dtype bf16
expect 0 "eval of a bf16 import" -- "$FFNSHAPE" eval "$tmp/run_bf16" --data "$tmp/val_0.bin" --batches 2
same_logits "bf16 import (bf16 rounding of the weights)" "$tmp/run_bf16" "$tmp/hf_llama_gqa" 5e-2

# 2. ffnshape models out and back in.
cat >"$tmp/base.yaml" <<YAML
model: {vocab_size: 96, d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 32, ffn: {hidden: 48}}
data: {train: "$tmp/train_*.bin", val: "$tmp/val_*.bin"}
train: {seq_len: 32, micro_batch: 4, steps: 6, threads: 1}
optimizer: {lr: 1.0e-2, warmup_steps: 1}
eval: {every: 0, batches: 1}
checkpoint: {every: 0, keep: 1}
log: {every: 6}
YAML
round_trip() {  # NAME STOCK(yes|no) --set...
  local name=$1 stock=$2
  shift 2
  expect 0 "train $name" -- "$FFNSHAPE" train "$tmp/base.yaml" --run-dir "$tmp/t_$name" "$@"
  expect 0 "export $name" -- "$FFNSHAPE" export "$tmp/t_$name" --out "$tmp/x_$name"
  if [ "$stock" = yes ]; then
    contains "stock transformers loads it" "$out" "export $name is a stock folder"
    same_logits "ffnshape -> transformers, $name" "$tmp/t_$name" "$tmp/x_$name"
  else
    contains "stock transformers cannot load it" "$out" "export $name says it needs ffnshape"
  fi
  expect 0 "import back $name" -- "$FFNSHAPE" import "$tmp/x_$name" --out "$tmp/b_$name"
  "$MODEL_PROBE" diff "$tmp/t_$name" "$tmp/b_$name" >"$tmp/diff" || fail "model_probe diff $name"
  contains "max_abs_diff 0" "$(cat "$tmp/diff")" "round trip $name keeps every tensor"
  "$MODEL_PROBE" logits "$tmp/t_$name" "$ids" >"$tmp/a.json" && "$MODEL_PROBE" logits "$tmp/b_$name" "$ids" >"$tmp/b.json"
  ref compare "$tmp/a.json" "$tmp/b.json" 0 >/dev/null || fail "round trip $name: logits differ"
  expect 0 "export again $name" -- "$FFNSHAPE" export "$tmp/b_$name" --out "$tmp/y_$name"
  cmp -s "$tmp/x_$name/model.safetensors" "$tmp/y_$name/model.safetensors" || fail "re-export of $name differs"
  cmp -s "$tmp/x_$name/config.json" "$tmp/y_$name/config.json" || fail "re-exported config.json of $name differs"
}
round_trip llama_gqa yes --set model.n_kv_heads=2 --set model.tie_embeddings=false
round_trip olmo2_tied yes --set model.family=olmo2 --set model.tie_embeddings=true --set model.n_kv_heads=1
round_trip llama3_rope yes --set model.rope_scaling.factor=8 --set model.rope_scaling.original_max_seq_len=16
round_trip hourglass no --set model.ffn.kind=hourglass --set model.ffn.k=3 --set model.ffn.hidden=16
grep -q '"num_mlp_layers": 3' "$tmp/x_hourglass/config.json" || fail "hourglass config has num_mlp_layers"
ref same_tensors "$tmp/x_hourglass/model.safetensors" "$tmp/x_hourglass/model.safetensors" >/dev/null || fail "readable by safetensors"
"$PYTHON" -c "
from safetensors import safe_open
names = set(safe_open('$tmp/x_hourglass/model.safetensors', 'pt').keys())
for k in range(3):
    for p in ('mlp.%d.gate_proj' % k, 'mlp.%d.up_proj' % k, 'mlp.%d.down_proj' % k, 'post_attention_layernorm.%d' % k):
        assert 'model.layers.1.%s.weight' % p in names, p" || fail "hourglass tensors in the paper's naming"
round_trip widths no --set 'model.ffn.widths=[40,56]' --set model.family=olmo2
grep -q '"intermediate_sizes"' "$tmp/x_widths/config.json" || fail "per-layer widths in the ffnshape config key"

# The tokenizer travels: a run's SentencePiece model goes out with its ids and comes back as data.tokenizer;
# a folder with only tokenizer.json says that it is not recorded.
mkdir -p "$tmp/txt" && python3 -c "
import random; r = random.Random(0); w = 'alpha beta gamma delta epsilon zeta eta theta iota kappa'.split()
for d in range(8): open('$tmp/txt/doc%d.txt' % d, 'w').write('\n'.join(' '.join(r.choice(w) for _ in range(12)) for _ in range(200)))"
expect 0 "data prepare" -- "$FFNSHAPE" data prepare --input "$tmp/txt" --out "$tmp/tok" --vocab-size 300
expect 0 "train with a tokenizer" -- "$FFNSHAPE" train "$tmp/base.yaml" --run-dir "$tmp/t_tok" --set model.vocab_size=320 \
  --set "data.train=$tmp/tok/train_*.bin" --set "data.val=$tmp/tok/val_*.bin" --set "data.tokenizer=$tmp/tok/tokenizer.model"
expect 0 "export with a tokenizer" -- "$FFNSHAPE" export "$tmp/t_tok" --out "$tmp/x_tok"
[ -s "$tmp/x_tok/tokenizer.model" ] || fail "export copies tokenizer.model"
grep -q '"eos_token_id": 2' "$tmp/x_tok/config.json" || fail "export writes the tokenizer's eos id"
expect 0 "import with a tokenizer" -- "$FFNSHAPE" import "$tmp/x_tok" --out "$tmp/b_tok"
grep -q "tokenizer: $tmp/b_tok/tokenizer.model" "$tmp/b_tok/config.yaml" || fail "import sets data.tokenizer"
cmp -s "$tmp/tok/tokenizer.model" "$tmp/b_tok/tokenizer.model" || fail "import copies tokenizer.model"
# transformers reads the exported tokenizer (tokenizer_config.json) as ffnshape encodes: the same ids
# (texts that begin with whitespace aside: transformers' Metaspace prepends no second "▁") and the
# same text back.
"$PYTHON" - "$tmp/x_tok" <<'PY' || fail "transformers' tokenizer of the export differs from SentencePiece's"
import json, sys
import sentencepiece, transformers
folder = sys.argv[1]
config = json.load(open(folder + "/tokenizer_config.json"))
assert (config["bos_token"], config["eos_token"], config["unk_token"], config["add_bos_token"]) == ("<s>", "</s>", "<unk>", False), config
sp = sentencepiece.SentencePieceProcessor(model_file=folder + "/tokenizer.model")
hf = transformers.AutoTokenizer.from_pretrained(folder)
texts = ["alpha beta gamma", "delta\n\nepsilon  zeta.", "Émile's café — 3.14 ✓ 日本", "kappaiota eta", "theta "]
for text in texts:
    ids = sp.encode(text)
    assert hf(text)["input_ids"] == ids, (text, hf(text)["input_ids"], ids)
    assert hf.decode(ids) == sp.decode(ids) == text, (text, hf.decode(ids))
print(f"  transformers' LlamaTokenizer of the export: the ids and text of SentencePiece on {len(texts)} texts")
PY
# A GGUF file's embedded llama (SentencePiece) vocabulary becomes the run's tokenizer.model: the export
# converted as llama.cpp does (gguf's SentencePieceVocab) imports with the same pieces, scores, types
# and special ids, encodes every text as the original model, and gives the same logits.
"$PYTHON" "$here/gguf_reference.py" from_hf "$tmp/x_tok" "$tmp/tok.gguf" || fail "gguf_reference.py from_hf"
expect 0 "import a GGUF with a llama vocabulary" -- "$FFNSHAPE" import "$tmp/tok.gguf" --out "$tmp/g_tok"
contains "-> tokenizer.model" "$out" "the embedded vocabulary is kept"
grep -q "tokenizer: $tmp/g_tok/tokenizer.model" "$tmp/g_tok/config.yaml" || fail "GGUF import sets data.tokenizer"
"$MODEL_PROBE" diff "$tmp/g_tok" "$tmp/t_tok" >"$tmp/diff" || fail "model_probe diff (GGUF with vocabulary)"
contains "max_abs_diff 0" "$(cat "$tmp/diff")" "GGUF round trip gives the same model"
"$PYTHON" - "$tmp/tok/tokenizer.model" "$tmp/g_tok/tokenizer.model" <<'PY' || fail "the tokenizer rebuilt from GGUF differs"
import random, sys
import sentencepiece
a, b = (sentencepiece.SentencePieceProcessor(model_file=f) for f in sys.argv[1:3])
assert b.vocab_size() == 320  # llama.cpp pads the vocabulary to the model's 320 rows with unused pieces
assert all(b.IsUnused(i) and b.IdToPiece(i) == f"[PAD{i}]" for i in range(a.vocab_size(), 320))
for i in range(a.vocab_size()):
    assert (a.IdToPiece(i), a.GetScore(i), a.IsControl(i), a.IsUnknown(i), a.IsByte(i)) == \
           (b.IdToPiece(i), b.GetScore(i), b.IsControl(i), b.IsUnknown(i), b.IsByte(i)), i
assert (a.bos_id(), a.eos_id(), a.unk_id(), a.pad_id()) == (b.bos_id(), b.eos_id(), b.unk_id(), b.pad_id())
r = random.Random(5)
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa Émile café — ✓ 日本 \n  x".split(" ")
texts = [" ".join(r.choice(words) for _ in range(r.randint(1, 30))) for _ in range(200)] + [" lead", "", "  two"]
for text in texts:
    assert a.encode(text) == b.encode(text), text
    assert b.decode(b.encode(text)) == a.decode(a.encode(text)), text
print(f"  GGUF vocabulary -> tokenizer.model: {a.vocab_size()} pieces as the original (+ {320 - a.vocab_size()} padding); "
      f"{len(texts)} texts encode alike")
PY
expect 0 "generate from the GGUF import with a text prompt" -- "$FFNSHAPE" generate "$tmp/g_tok" --prompt "alpha beta" --max-tokens 4 --json
contains '"text"' "$out" "a text prompt through the rebuilt tokenizer"
"$PYTHON" "$here/gguf_reference.py" from_hf "$tmp/x_tok" "$tmp/bad_types.gguf" --bad-types || fail "gguf_reference.py --bad-types"
expect 2 "a GGUF vocabulary with one type too few" -- "$FFNSHAPE" import "$tmp/bad_types.gguf" --out "$tmp/g_bad"
contains "not a valid SentencePiece vocabulary" "$err" "bad vocabulary named"
[ ! -e "$tmp/g_bad" ] || fail "nothing written for a bad vocabulary"
# A folder with a tokenizer.json that cannot be read exactly: the model imports, the tokenizer is
# reported with the reason and not recorded.
cp -r "$tmp/hf_llama_gqa" "$tmp/hf_json_bad" && echo '{"model": {"type": "BPE"}}' >"$tmp/hf_json_bad/tokenizer.json"
expect 0 "import with a broken tokenizer.json" -- "$FFNSHAPE" import "$tmp/hf_json_bad" --out "$tmp/run_json_bad"
contains "tokenizer.json: not kept" "$out" "a broken tokenizer.json is reported, not recorded"
grep -q "tokenizer: \"\"\|tokenizer: ''\|tokenizer: *$" "$tmp/run_json_bad/config.yaml" || fail "data.tokenizer set for a broken tokenizer.json"
# A byte-level BPE tokenizer.json (trained by the tokenizers package) with its tokenizer_config.json,
# beside a Llama of 300 rows that transformers writes: kept, used for text prompts, and exported
# again beside the weights.
"$PYTHON" - "$tmp/hf_json_tok" <<'PY' || fail "could not write a model folder with a tokenizer.json"
import json, sys, torch
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
config = LlamaConfig(vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, max_position_embeddings=64, tie_word_embeddings=True)
LlamaForCausalLM(config).save_pretrained(sys.argv[1])
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=280, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator(["alpha beta gamma delta"] * 50, trainer)
tok.save(sys.argv[1] + "/tokenizer.json")
json.dump({"eos_token": "<|endoftext|>", "bos_token": None}, open(sys.argv[1] + "/tokenizer_config.json", "w"))
PY
expect 0 "import with tokenizer.json" -- "$FFNSHAPE" import "$tmp/hf_json_tok" --out "$tmp/run_json_tok"
contains "tokenizer.json (Hugging Face byte-level BPE), copied" "$out" "a tokenizer.json is kept"
[ -f "$tmp/run_json_tok/tokenizer.json" ] && [ -f "$tmp/run_json_tok/tokenizer_config.json" ] || fail "tokenizer files not copied"
expect 0 "generate with a text prompt through tokenizer.json" -- "$FFNSHAPE" generate "$tmp/run_json_tok" --prompt "alpha beta" \
  --max-tokens 3 --json
printf '%s\n' "$out" >"$tmp/json_tok_generated.json"
expect 0 "export the run with tokenizer.json" -- "$FFNSHAPE" export "$tmp/run_json_tok" --out "$tmp/hf_json_back"
"$PYTHON" - "$tmp/hf_json_tok" "$tmp/json_tok_generated.json" "$tmp/hf_json_back" <<'PY' || fail "tokenizer.json import / export"
import json, sys
from tokenizers import Tokenizer
from transformers import AutoTokenizer
ours = json.load(open(sys.argv[2]))
assert ours["prompt_tokens"] == Tokenizer.from_file(sys.argv[1] + "/tokenizer.json").encode("alpha beta").ids, ours
back = AutoTokenizer.from_pretrained(sys.argv[3])
assert back("alpha beta gamma").input_ids == Tokenizer.from_file(sys.argv[1] + "/tokenizer.json").encode("alpha beta gamma").ids
assert back.eos_token == "<|endoftext|>", back.eos_token
print("  tokenizer.json: kept on import, prompt ids as tokenizers, exported with its config for AutoTokenizer")
PY

# 3. Malformed folders: exit 2, naming what is wrong; nothing written.
mkdir -p "$tmp/empty"
expect 2 "no config.json" -- "$FFNSHAPE" import "$tmp/empty" --out "$tmp/r1"
contains "config.json' is missing" "$err" "missing config.json named"
bad() {  # NAME: a fresh copy of the GQA llama folder in $tmp/bad_NAME
  rm -rf "$tmp/bad_$1" && cp -r "$tmp/hf_llama_gqa" "$tmp/bad_$1"
}
bad arch && ref edit "$tmp/bad_arch" architectures '["MistralForCausalLM"]'
expect 2 "unknown architecture" -- "$FFNSHAPE" import "$tmp/bad_arch" --out "$tmp/r2"
contains "MistralForCausalLM" "$err" "architecture named"
bad bias && ref edit "$tmp/bad_bias" attention_bias true
expect 2 "attention bias" -- "$FFNSHAPE" import "$tmp/bad_bias" --out "$tmp/r3"
contains "attention_bias" "$err" "attention_bias named"
bad yarn && ref edit "$tmp/bad_yarn" rope_parameters '{"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0}'
expect 2 "rope type yarn" -- "$FFNSHAPE" import "$tmp/bad_yarn" --out "$tmp/r4"
contains '"yarn"' "$err" "rope type named"
bad missing && ref drop "$tmp/bad_missing" model.layers.1.mlp.up_proj.weight
expect 2 "a missing tensor" -- "$FFNSHAPE" import "$tmp/bad_missing" --out "$tmp/r5"
contains "missing tensors: model.layers.1.mlp.up_proj.weight" "$err" "missing tensor named"
bad shape && ref reshape "$tmp/bad_shape" model.layers.0.self_attn.k_proj.weight
expect 2 "a wrong shape" -- "$FFNSHAPE" import "$tmp/bad_shape" --out "$tmp/r6"
contains "model.layers.0.self_attn.k_proj.weight is [15, 32] where the config implies [16, 32]" "$err" "wrong shape named"
bad extra && ref edit "$tmp/bad_extra" num_hidden_layers 1
expect 2 "tensors that map to nothing" -- "$FFNSHAPE" import "$tmp/bad_extra" --out "$tmp/r7"
contains "map to nothing in the model: model.layers.1." "$err" "unmapped tensors named"
bad cut && truncate -s -8 "$tmp/bad_cut/model.safetensors"
expect 2 "truncated safetensors" -- "$FFNSHAPE" import "$tmp/bad_cut" --out "$tmp/r8"
contains "bad_cut/model.safetensors' is malformed" "$err" "truncated file named"
for r in r1 r2 r3 r4 r5 r6 r7 r8; do [ ! -e "$tmp/$r" ] || fail "a refused import wrote $r"; done
expect 2 "import into an existing run" -- "$FFNSHAPE" import "$tmp/hf_llama_gqa" --out "$tmp/run_llama_gqa"
contains "already exists" "$err" "existing run refused"
expect 2 "export into a non-empty folder" -- "$FFNSHAPE" export "$tmp/t_llama_gqa" --out "$tmp/hf_llama_gqa"
expect 2 "export of a folder without checkpoints" -- "$FFNSHAPE" export "$tmp/empty" --out "$tmp/r9"
# Exports and imports build their folder under OUT.partial and rename it when complete: one left by
# a killed process is replaced, and none is left over.
mkdir -p "$tmp/x_stale.partial" && echo "cut short" >"$tmp/x_stale.partial/model.safetensors"
expect 0 "export over a killed export's leftovers" -- "$FFNSHAPE" export "$tmp/t_llama_gqa" --out "$tmp/x_stale"
cmp -s "$tmp/x_llama_gqa/model.safetensors" "$tmp/x_stale/model.safetensors" || fail "export after leftovers differs"
leftover=$(find "$tmp" -name '*.partial')
[ -z "$leftover" ] || fail "staging folders left behind: $leftover"

finish cli_hf
