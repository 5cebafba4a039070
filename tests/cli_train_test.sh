#!/usr/bin/env bash
# End-to-end checks of `ffnshape train` and `ffnshape eval`: outputs of a run, resume, SIGTERM, and
# the exit codes and messages of bad input. Environment: FFNSHAPE (the binary).
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"

# Shards written by an independent (Python) writer of the llm.c format, plus a corrupt one.
python3 - "$tmp" "$(dirname "$0")" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from llmc_shards import shard, text

d = sys.argv[1]
shard(d + "/train_0.bin", text(30000))
shard(d + "/val_0.bin", text(5000))
shard(d + "/u32_0.bin", text(30000), magic=20240801, version=7, fmt="I")
shard(d + "/short_0.bin", text(1000), count=2000)  # header says more tokens than the file holds
PY

cat >"$tmp/train.yaml" <<YAML
model: {vocab_size: 64, d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 32, ffn: {hidden: 64}}
data: {train: "$tmp/train_*.bin", val: "$tmp/val_*.bin"}
train: {seq_len: 32, micro_batch: 4, steps: 30, threads: 1}
optimizer: {lr: 3.0e-3, warmup_steps: 3}
eval: {every: 10, batches: 2}
checkpoint: {every: 10, keep: 2}
log: {every: 5}
YAML

expect 0 "train" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/run"
contains "val_ppl" "$out" "train summary line"
for f in config.yaml metrics.jsonl summary.json checkpoints/step_00000030/DONE; do
  [ -e "$tmp/run/$f" ] || fail "run dir lacks $f"
done
python3 - "$tmp/run" <<'PY' || fail "metrics.jsonl / summary.json contents"
import json, sys
run = sys.argv[1]
lines = [json.loads(line) for line in open(run + "/metrics.jsonl")]
steps = [l for l in lines if "loss" in l]
evals = [l for l in lines if "val_loss" in l]
assert [l["step"] for l in steps] == [5, 10, 15, 20, 25, 30], steps
assert all(k in steps[0] for k in ("step", "loss", "lr", "grad_norm", "tokens_per_s", "mfu")), steps[0]
assert [l["step"] for l in evals] == [10, 20, 30] and "val_ppl" in evals[0], evals
assert steps[-1]["loss"] < steps[0]["loss"], steps
s = json.load(open(run + "/summary.json"))
assert s["complete"] and s["tokens_seen"] == 30 * 4 * 32 and s["params"]["total"] > 0, s
PY
[ "$(ls "$tmp/run/checkpoints" | tr '\n' ' ')" = "step_00000020 step_00000030 " ] || fail "checkpoint.keep: $(ls "$tmp/run/checkpoints")"

expect 0 "eval" -- "$FFNSHAPE" eval "$tmp/run"
python3 -c "
import json
d = json.load(open('$tmp/out')); s = json.load(open('$tmp/run/summary.json'))
assert abs(d['val_loss'] - s['val_loss']) < 1e-6, (d, s)" || fail "eval disagrees with the run's final val_loss"
expect 0 "eval of a checkpoint folder" -- "$FFNSHAPE" eval "$tmp/run/checkpoints/step_00000020"
contains '"step": 20' "$out" "eval names the step"

expect 0 "train on uint32 shards" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/run32" \
  --set "data.train=$tmp/u32_*.bin" --set train.steps=3
# A launcher's contradiction is refused before anything is written (tests/data_parallel_test.sh
# trains with ranks).
expect 2 "srun with a broken rank" -- env SLURM_PROCID=4 SLURM_STEP_NUM_TASKS=2 SLURM_JOB_NODELIST=n1 \
  "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/ranked"
contains "rank 4 is outside a world of 2" "$err" "the launcher's contradiction is named"
[ ! -e "$tmp/ranked" ] || fail "a refused rank wrote nothing"
# One process per run: a second train on a run being trained is refused (exit 2, the holder named,
# nothing touched); once the first is stopped, the run resumes.
"$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/locked" --set train.steps=100000 >"$tmp/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do grep -q '"step"' "$tmp/locked/metrics.jsonl" 2>/dev/null && break; sleep 0.1; done
expect 2 "a second process on the same run" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/locked" --set train.steps=100000
contains "is being trained by another process (pid $first)" "$err" "the holder is named"
kill -INT "$first"; wait "$first"
expect 1 "the run continues once the first has stopped" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/locked" \
  --set train.steps=100000 --stop-at 1
contains "resuming from" "$err$out" "the stopped run resumes"
expect 0 "resume of a finished run" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/run"
contains "already finished" "$out" "a finished run says so"
python3 - "$tmp/run" "$tmp/out" <<'PY' || fail "a finished run reports its real final loss"
import json, re, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
printed = float(re.search(r"final loss ([0-9.eE+-]+)", open(sys.argv[2]).read()).group(1))
assert printed > 0 and abs(printed - s["final_loss"]) < 1e-4 * s["final_loss"], (printed, s["final_loss"])
PY
# The resolved config is read back as numbers by a YAML 1.1 reader (PyYAML): 1e-05 would be a string.
/usr/bin/python3 - "$tmp/run/config.yaml" <<'PY' || fail "config.yaml numbers under PyYAML"
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
for section, key in [("model", "norm_eps"), ("model", "rope_theta"), ("optimizer", "lr"), ("optimizer", "eps"),
                     ("optimizer", "min_lr"), ("optimizer", "weight_decay")]:
    v = c[section][key]
    assert isinstance(v, (int, float)) and not isinstance(v, bool), (section, key, v)
assert c["model"]["norm_eps"] == 1e-05 and c["optimizer"]["eps"] == 1e-08, c
assert c["train"]["tf32"] is True and c["train"]["activation_checkpointing"] is False, c["train"]
PY
expect 2 "resume never on an existing run" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/run" --resume never
contains "nothing was overwritten" "$err" "resume never message"

expect 2 "missing data" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/r2" --set "data.train=$tmp/none_*.bin"
contains "no files match" "$err" "missing data message"
expect 2 "missing validation data" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/r2v" --set "data.val=$tmp/none_*.bin"
contains "no files match" "$err" "missing validation data message"
[ ! -e "$tmp/r2v/metrics.jsonl" ] || fail "missing validation data was found only after training started"
expect 2 "corrupt shard" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/r3" --set "data.train=$tmp/short_0.bin"
contains "short_0.bin" "$err" "corrupt shard message names the file"
expect 2 "token id beyond the vocabulary" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/r4" --set model.vocab_size=32
contains "train_0.bin" "$err" "vocabulary message names the file"
expect 2 "bad train config" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/r5" --set train.precision=fp8
contains "train.precision" "$err" "bad precision message"
expect 2 "sequence longer than the model" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/r6" --set train.seq_len=64
contains "max_seq_len" "$err" "seq_len message"
expect 1 "non-finite loss" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/r7" --set optimizer.lr=1e12 \
  --set optimizer.min_lr=1e12 --set optimizer.clip=0
contains "non-finite" "$err" "non-finite message"
expect 2 "eval of an empty folder" -- "$FFNSHAPE" eval "$tmp"

# SIGTERM: the step finishes, a complete checkpoint is written, and the run resumes to its end.
"$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/sig" --set train.steps=100000 --set log.every=1 >"$tmp/sig.out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ -s "$tmp/sig/metrics.jsonl" ] && break
  sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
code=$?
latest=$(ls -d "$tmp"/sig/checkpoints/step_* 2>/dev/null | tail -1)
checks=$((checks + 1))
if [ "$code" -ne 1 ] || [ -z "$latest" ] || [ ! -e "$latest/DONE" ]; then
  fail "SIGTERM: exit $code, checkpoint '$latest'"
  cat "$tmp/sig.out"
fi
contains "stopped at step" "$(cat "$tmp/sig.out")" "SIGTERM message"
expect 1 "time slice with --stop-at" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/sig" --set train.steps=100000 --stop-at 500
[ -e "$tmp/sig/checkpoints/step_00000500/DONE" ] || fail "--stop-at 500 left no complete checkpoint"

# generate: KV-cached decoding equals recomputing every step; a seed repeats; bad prompts exit 2.
expect 0 "generate greedy" -- "$FFNSHAPE" generate "$tmp/run" --prompt-tokens 5,17,42 --max-tokens 8 --json
greedy=$(python3 -c 'import json,sys; t = json.loads(sys.stdin.read())["tokens"]; assert len(t) == 8, t; print(t)' <<<"$out") ||
  fail "generate --json: $out"
expect 0 "generate without the cache" -- "$FFNSHAPE" generate "$tmp/run" --prompt-tokens 5,17,42 --max-tokens 8 --json --no-cache
contains "$(tr -d ' ' <<<"$greedy" | tr -d '[]')" "$(tr -d ' \n' <<<"$out")" "cached and uncached tokens agree"
expect 0 "generate sampled" -- "$FFNSHAPE" generate "$tmp/run" --prompt-tokens 5,17 --max-tokens 12 --temperature 1 --top-k 10 --seed 3
first=$out
expect 0 "generate sampled again" -- "$FFNSHAPE" generate "$tmp/run" --prompt-tokens 5,17 --max-tokens 12 --temperature 1 --top-k 10 --seed 3
[ "$out" = "$first" ] || fail "the same seed gave other tokens: '$first' then '$out'"
expect 2 "generate without a prompt" -- "$FFNSHAPE" generate "$tmp/run"
contains "exactly one" "$err" "no-prompt message"
expect 2 "generate with text but no tokenizer" -- "$FFNSHAPE" generate "$tmp/run" --prompt "hello"
contains "tokenizer" "$err" "no-tokenizer message"
expect 2 "generate with a bad id" -- "$FFNSHAPE" generate "$tmp/run" --prompt-tokens 5,999
contains "not a token id" "$err" "bad-id message"
expect 2 "generate past max_seq_len" -- "$FFNSHAPE" generate "$tmp/run" --prompt-tokens 5,17 --max-tokens 31
contains "max_seq_len" "$err" "too-long message"

# With a tokenizer (data prepare on a small text), a text prompt comes back as text.
python3 -c '
import random, sys
rng = random.Random(1)
words = "the cat sat on a mat and the dog ran to the red ball while birds sang".split()
for d in range(40):
    open(f"{sys.argv[1]}/doc{d}.txt", "w").write(" ".join(rng.choice(words) for _ in range(300)) + "\n")
' "$(mkdir -p "$tmp/text" && echo "$tmp/text")"
expect 0 "data prepare" -- "$FFNSHAPE" data prepare --input "$tmp/text" --out "$tmp/bpe" --vocab-size 320
expect 0 "train with a tokenizer" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/bpe_run" --set train.steps=30 --set model.vocab_size=320 \
  --set "data.train=$tmp/bpe/train_*.bin" --set "data.val=$tmp/bpe/val_*.bin" --set "data.tokenizer=$tmp/bpe/tokenizer.model"
expect 0 "generate from text" -- "$FFNSHAPE" generate "$tmp/bpe_run" --prompt "the cat" --max-tokens 10 --json
python3 -c 'import json,sys; j = json.loads(sys.stdin.read()); assert j["text"].strip() and len(j["tokens"]) <= 10, j' <<<"$out" ||
  fail "generate --prompt --json: $out"

# bf16 on the CPU: a warning naming the fix where the CPU has no native bf16 products, none where it has.
expect 0 "bf16 train" -- "$FFNSHAPE" train "$tmp/train.yaml" --run-dir "$tmp/bf16" --set train.precision=bf16 \
  --set train.steps=2 --set eval.every=0 --set checkpoint.every=0
if bash "$(dirname "$0")/../scripts/cpu_has_native_bf16.sh"; then
  [[ "$out$err" != *"no native bf16"* ]] || fail "bf16 warning on a CPU with native bf16: $err"
else
  contains "set train.precision: fp32" "$out$err" "bf16 warning on a CPU without native bf16"
fi

finish cli_train
