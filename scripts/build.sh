#!/usr/bin/env bash
# Configures and builds ffnshape into build/ (BUILD_DIR overrides). Extra arguments go to cmake's
# configure step, e.g. -DTorch_DIR=... for a CUDA libtorch.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
generator=()
command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ] && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
