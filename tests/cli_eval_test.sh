#!/usr/bin/env bash
# `ffnshape eval --task`: zero-shot multiple choice on the shipped sample files of ARC-Easy, HellaSwag
# and PIQA. The prompts (context, choices, gold) must be those lm-evaluation-harness builds from the
# same files with its own task definitions (tests/lm_eval_reference.py; skipped without lm-eval in
# the venv), and the reported accuracies and standard errors those of the per-question predictions.
# Environment: FFNSHAPE.
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
python=$here/../.venv/bin/python
tasks=$here/fixtures/tasks

# A tiny model with a SentencePiece tokenizer.
mkdir -p "$tmp/text"
python3 - "$tmp/text" <<'PY'
import random, sys
rng = random.Random(2)
words = "the a sun light plant water ice hen egg cat dog bread towel lamp key door cool hot open".split()
for d in range(30):
    open(f"{sys.argv[1]}/doc{d}.txt", "w").write(" ".join(rng.choice(words) for _ in range(300)) + ".\n")
PY
expect 0 "data prepare" -- "$FFNSHAPE" data prepare --input "$tmp/text" --out "$tmp/data" --vocab-size 320
cat >"$tmp/model.yaml" <<YAML
model: {vocab_size: 320, d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 64, ffn: {hidden: 64}}
data: {train: "$tmp/data/train_*.bin", val: "$tmp/data/val_*.bin", tokenizer: "$tmp/data/tokenizer.model"}
train: {seq_len: 32, micro_batch: 8, steps: 20, threads: 1}
eval: {every: 0, batches: 2}
checkpoint: {every: 0, keep: 1}
YAML
expect 0 "train" -- "$FFNSHAPE" train "$tmp/model.yaml" --run-dir "$tmp/run"

for pair in arc_easy:arc_easy hellaswag:hellaswag piqa:piqa; do
  task=${pair%%:*}
  expect 0 "eval $task" -- "$FFNSHAPE" eval "$tmp/run" --task "$tasks/${task}_sample.jsonl" --samples "$tmp/$task.samples"
  printf '%s\n' "$out" >"$tmp/$task.json"
  python3 - "$tmp/$task.json" "$tmp/$task.samples" <<'PY' || fail "$task: accuracies do not follow from the predictions"
import json, math, sys
summary = json.load(open(sys.argv[1]))
rows = [json.loads(line) for line in open(sys.argv[2])]
for key, pick in (("acc", "prediction"), ("acc_norm", "prediction_norm")):
    hits = [float(r[pick] == r["gold"]) for r in rows]
    n, mean = len(hits), sum(hits) / len(hits)
    sd = math.sqrt(sum((h - mean) ** 2 for h in hits) / (n - 1))
    assert summary["questions"] == n and abs(summary[key] - mean) < 1e-12, (key, summary[key], mean)
    assert abs(summary[key + "_stderr"] - sd / math.sqrt(n)) < 1e-12, (key, summary[key + "_stderr"])
for r in rows:  # acc picks the largest log-likelihood, acc_norm the largest per character
    lls = [s["loglikelihood"] for s in r["scores"]]
    assert r["prediction"] == lls.index(max(lls))
    norm = [ll / len(c) for ll, c in zip(lls, r["choices"])]
    assert r["prediction_norm"] == norm.index(max(norm))
PY
  if "$python" -c 'import lm_eval' 2>/dev/null; then
    HF_DATASETS_OFFLINE=1 "$python" "$here/lm_eval_reference.py" prompts "$task" "$tasks/${task}_sample.jsonl" \
      >"$tmp/$task.reference" 2>"$tmp/$task.reference.err" || fail "$task: lm_eval_reference.py: $(tail -n 3 "$tmp/$task.reference.err")"
    python3 - "$tmp/$task.samples" "$tmp/$task.reference" <<'PY' || fail "$task: prompts differ from lm-evaluation-harness's"
import json, sys
ours = [json.loads(line) for line in open(sys.argv[1])]
theirs = [json.loads(line) for line in open(sys.argv[2])]
assert len(ours) == len(theirs), (len(ours), len(theirs))
for a, b in zip(ours, theirs):
    for key in ("context", "choices", "gold"):
        assert a[key] == b[key], (key, a[key], b[key])
PY
  else
    echo "  $task: lm-eval is not in $python; prompt comparison skipped (scripts/setup.sh installs it)"
  fi
done

# lm-evaluation-harness itself on the same model: exported to a Hugging Face folder (with its
# SentencePiece tokenizer) and scored by the harness's HF model class. Accuracies must agree exactly,
# every choice's log-likelihood within 1e-4.
if "$python" -c 'import lm_eval, accelerate, sentencepiece' 2>/dev/null; then
  expect 0 "export for lm-eval" -- "$FFNSHAPE" export "$tmp/run" --out "$tmp/hf"
  for task in arc_easy hellaswag piqa; do
    HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 "$python" "$here/lm_eval_reference.py" score "$task" "$tasks/${task}_sample.jsonl" \
      "$tmp/hf" >"$tmp/$task.harness" 2>"$tmp/$task.harness.err" || fail "$task: lm-eval: $(tail -n 3 "$tmp/$task.harness.err")"
    python3 - "$tmp/$task.json" "$tmp/$task.samples" "$tmp/$task.harness" <<'PY' || fail "$task: ffnshape and lm-eval disagree"
import json, sys
ours, rows, theirs = json.load(open(sys.argv[1])), [json.loads(l) for l in open(sys.argv[2])], json.load(open(sys.argv[3]))
for key in ("acc", "acc_norm", "acc_stderr", "acc_norm_stderr"):
    assert abs(ours[key] - theirs[key]) < 1e-12, (key, ours[key], theirs[key])
worst = max(abs(s["loglikelihood"] - ll) for r, lls in zip(rows, theirs["loglikelihoods"]) for s, ll in zip(r["scores"], lls))
assert len(rows) == len(theirs["loglikelihoods"]) and worst < 1e-4, worst
print(f"  {sys.argv[1].rsplit('/', 1)[1][:-5]}: acc {ours['acc']:.3f}, acc_norm {ours['acc_norm']:.3f} as lm-eval; "
      f"log-likelihoods within {worst:.2g}")
PY
  done
  # Greedy decoding of the folder imported back equals transformers' generate(do_sample=False).
  expect 0 "import the exported folder" -- "$FFNSHAPE" import "$tmp/hf" --out "$tmp/imported"
  expect 0 "generate from the imported run" -- "$FFNSHAPE" generate "$tmp/imported" --prompt-tokens 1,264,273,5 \
    --max-tokens 24 --json
  printf '%s\n' "$out" >"$tmp/generated.json"
  "$python" - "$tmp/hf" "$tmp/generated.json" <<'PY' || fail "greedy tokens differ from transformers' generate"
import json, sys, torch
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.float32).eval()
ours = json.load(open(sys.argv[2]))
prompt = torch.tensor([ours["prompt_tokens"]])
theirs = model.generate(prompt, do_sample=False, max_new_tokens=24, min_new_tokens=24, eos_token_id=None,
                        pad_token_id=0)[0, prompt.shape[1]:].tolist()
n = len(ours["tokens"])  # ffnshape stops at EOS; compare what it generated
assert ours["tokens"] == theirs[:n], (ours["tokens"], theirs)
print(f"  greedy decoding: {n} tokens as transformers' generate")
PY
else
  echo "  lm-eval, accelerate or sentencepiece missing from $python: the harness comparison is skipped"
fi

# An experiment that lists tasks scores every run and reports them per arm.
cat >"$tmp/exp.yaml" <<YAML
base: model.yaml
seeds: [1, 2]
budget: {reference: a, tolerance: 0.05}
tasks: [$tasks/arc_easy_sample.jsonl, $tasks/piqa_sample.jsonl]
arms:
  - name: a
  - name: b
    set: [model.n_layers=1, model.ffn.hidden=8]
    solve: [ffn.hidden=8..512]
YAML
expect 0 "experiment with tasks" -- "$FFNSHAPE" experiment "$tmp/exp.yaml" --run-root "$tmp/exp"
contains "| arm | arc_easy_sample | piqa_sample |" "$(cat "$tmp/exp/report.md")" "report's task table"
expect 0 "eval of one experiment run" -- "$FFNSHAPE" eval "$tmp/exp/b/seed-2" --task "$tasks/piqa_sample.jsonl"
python3 - "$tmp/exp" "$out" <<'PY' || fail "tasks.json / results.csv disagree with ffnshape eval"
import csv, json, sys
root, direct = sys.argv[1], json.loads(sys.argv[2])
stored = json.load(open(f"{root}/b/seed-2/tasks.json"))["piqa_sample"]
assert stored["acc"] == direct["acc"] and stored["acc_norm"] == direct["acc_norm"], (stored, direct)
rows = list(csv.DictReader(open(f"{root}/results.csv")))
assert len(rows) == 4 and all(r["arc_easy_sample_acc"] and r["piqa_sample_acc_norm"] for r in rows), rows[0]
PY
bad_tasks=$(printf 'base: model.yaml\nbudget: {params: 1000}\ntasks: [nothing.jsonl]\narms: [{name: a}]\n')
printf '%s\n' "$bad_tasks" >"$tmp/bad.yaml"
expect 2 "a missing task file" -- "$FFNSHAPE" experiment "$tmp/bad.yaml" --dry-run
contains "tasks" "$err" "missing task message"

expect 2 "a task file of another format" -- "$FFNSHAPE" eval "$tmp/run" --task "$tasks/piqa_sample.jsonl" --task-format arc
contains "not a record of the arc format" "$err" "wrong format message"
expect 2 "an unknown format" -- "$FFNSHAPE" eval "$tmp/run" --task "$tasks/piqa_sample.jsonl" --task-format mmlu
finish cli_eval
