#!/usr/bin/env bash
# Configures and builds ffnshape into build/ (BUILD_DIR overrides) against the LibTorch of the torch
# wheel in the project's virtual environment (scripts/setup.sh). Another LibTorch:
#   LIBTORCH=/path/to/libtorch bash scripts/build.sh      (an unpacked LibTorch zip, or a conda
#                                                          torch's `torch.utils.cmake_prefix_path`)
# Extra arguments go to cmake's configure step; BUILD_TARGETS="a b" builds only those targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
venv=${VENV:-$root/.venv}

if [ -n "${LIBTORCH:-}" ]; then
  prefix=$LIBTORCH
else
  prefix=$("$venv/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null) || {
    echo "build: no torch in $venv" >&2
    echo "  fix: run scripts/setup.sh, or set LIBTORCH=/path/to/libtorch" >&2
    exit 2
  }
  # A CUDA wheel configures only with a CUDA toolkit of the same major version (CUDA's headers and
  # nvcc must agree with the libraries inside the wheel).
  torch_cuda=$("$venv/bin/python" -c 'import torch; print(torch.version.cuda or "")')
  if [ -n "$torch_cuda" ]; then
    nvcc_cuda=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
    if [ -z "$nvcc_cuda" ]; then
      echo "build: torch in $venv is built for CUDA $torch_cuda, but no nvcc is on PATH" >&2
      echo "  fix: install the CUDA toolkit ${torch_cuda%%.*}.x (or put its bin/ on PATH), or install a CPU wheel:" >&2
      echo "       FFNSHAPE_TORCH='torch==2.15.0' pip install --index-url https://download.pytorch.org/whl/cpu ..." >&2
      exit 2
    fi
    if [ "${nvcc_cuda%%.*}" != "${torch_cuda%%.*}" ]; then
      echo "build: torch in $venv is built for CUDA $torch_cuda but nvcc is CUDA $nvcc_cuda" >&2
      echo "  fix: put a CUDA ${torch_cuda%%.*}.x toolkit first on PATH, or install the torch wheel built for" >&2
      echo "       CUDA ${nvcc_cuda%%.*} (PyTorch's index https://download.pytorch.org/whl/cu${nvcc_cuda%%.*}<minor>)" >&2
      exit 2
    fi
  fi
fi

generator=()
command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ] && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "$@" >/dev/null
# BUILD_TARGETS="a b": only those targets (scripts/sanitize.sh, scripts/fuzz.sh); default: everything.
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" --parallel "$(nproc)" "${targets[@]}"
