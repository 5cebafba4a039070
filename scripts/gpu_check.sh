#!/usr/bin/env bash
# The GPU check: one script for a machine with an NVIDIA GPU and a CUDA PyTorch but no package
# registry. It builds ffnshape against that machine's torch, runs the test suite with CUDA visible
# (tests/test_cuda.cpp: CPU vs CUDA attention and training steps, bit-exact resume on the GPU), then
# measures the 113M paper models (conventional; hourglass K=4 with 6 layers) in bf16: tokens/s, MFU
# against the GPU's published peak and peak memory, beside PyTorch eager on the same model
# (bench/torch_reference.py), plus a short `ffnshape train` run through the whole trainer, and on 2+
# GPUs a 2-rank NCCL run with the all-reduce's bus bandwidth. About 8 minutes on one H200 (most of it
# the build).
#
#   bash scripts/gpu_check.sh --pack        here, on Debian with apt: puts the .deb files the build needs
#                                           besides torch (yaml-cpp, CLI11, GoogleTest, nlohmann-json,
#                                           SentencePiece, Hera, GUDHI, Boost headers; ~11 MB) into
#                                           gpu_bundle/ (git-ignored), to carry to the GPU machine
#   bash scripts/gpu_check.sh               there: unpacks gpu_bundle/ with dpkg -x (or uses the system's
#                                           packages when it has them), builds into build-gpu/, checks
#   bash scripts/gpu_check.sh --rehearse    on a CPU-only machine (CI): the same steps at tiny sizes on
#                                           the CPU, with the CUDA tests skipped, so the script stays
#                                           working where no GPU is lent
#
# Environment: GPU_CHECK_CTEST=0 skips the whole suite (the CUDA tests still run), PYTHON (default
# python3: the one with the CUDA torch), BUILD_DIR (default build-gpu;
# --rehearse: build), STEPS (timed benchmark steps, default 20), OUT (where results go, default
# gpu_check_out/). Everything it prints also lands in $OUT/gpu_check.log, the table in $OUT/speed.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:-check}
bundle=$root/gpu_bundle
debs=(libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev libgtest-dev nlohmann-json3-dev libsentencepiece-dev
      libsentencepiece0 libhera-dev libgudhi-dev libboost1.74-dev libgloo-dev libpcre2-dev libpcre2-8-0
      libicu-dev libicu72 libzstd-dev zlib1g-dev)

die() { echo "gpu_check: error: $1" >&2; [ -n "${2:-}" ] && echo "  fix: $2" >&2; exit 1; }
section() { echo; echo "== $* ($(date +%T))"; }

if [ "$mode" = "--pack" ]; then
  command -v apt-get >/dev/null || die "--pack needs apt-get (Debian 12)" "run it on the development machine"
  rm -rf "$bundle/debs"
  mkdir -p "$bundle/debs"
  (cd "$bundle/debs" && apt-get download "${debs[@]}" >/dev/null 2>&1) ||
    die "apt-get download failed" "run 'apt-get update' first"
  echo "gpu_check: $(ls "$bundle/debs" | wc -l) packages, $(du -sh "$bundle/debs" | cut -f1) in $bundle/debs"
  echo "  carry gpu_bundle to the GPU machine and run: bash scripts/gpu_check.sh"
  exit 0
fi
[ "$mode" = check ] || [ "$mode" = --rehearse ] || die "unknown mode '$mode'" "use --pack, --rehearse or no argument"

out=${OUT:-$root/gpu_check_out}
mkdir -p "$out"
exec > >(tee "$out/gpu_check.log") 2>&1
start=$(date +%s)
python=${PYTHON:-python3}
steps=${STEPS:-20}

# --- what this machine has ---------------------------------------------------------------------------
section "machine"
if [ "$mode" = check ]; then
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$python" -c 'import torch; assert torch.cuda.is_available(), "torch sees no GPU"; print("torch", torch.__version__, "CUDA", torch.version.cuda, torch.cuda.get_device_name(0))' ||
    die "$python has no CUDA torch that sees a GPU" "set PYTHON to the Python whose torch has CUDA"
  build=${BUILD_DIR:-$root/build-gpu}
  device=cuda
else
  python=${PYTHON:-$root/.venv/bin/python}
  build=${BUILD_DIR:-$root/build}
  device=cpu
  # 77: ctest's skip code, for a build made against another LibTorch without the project's venv
  "$python" -c 'import torch' 2>/dev/null || { echo "gpu_check: $python has no torch; rehearsal skipped"; exit 77; }
fi
for tool in cmake c++; do command -v "$tool" >/dev/null || die "no $tool on PATH" "install a C++ toolchain and CMake"; done

# --- the libraries besides torch: the system's, or the carried .deb files ---------------------------
prefix=""
# The carried packages are used when the system lacks any of them (an image may have some, e.g.
# yaml-cpp, and not others, e.g. Hera).
has_system_libraries() {
  for header in yaml-cpp/yaml.h hera/wasserstein/auction_runner_gs.h pcre2.h unicode/normalizer2.h zstd.h; do
    [ -f "/usr/include/$header" ] || return 1
  done
}
if [ "$mode" = check ] && [ -d "$bundle/debs" ] && ! has_system_libraries; then
  section "unpacking $(ls "$bundle/debs" | wc -l) carried packages"
  prefix=$bundle/prefix
  rm -rf "$prefix"
  for deb in "$bundle"/debs/*.deb; do dpkg-deb -x "$deb" "$prefix" 2>/dev/null || dpkg -x "$deb" "$prefix"; done
  usr=$prefix/usr
  # The pkg-config files (SentencePiece, PCRE2, ICU, ...) name /usr; point them at the unpacked copy.
  sed -i "s|^prefix=.*|prefix=$usr|" "$usr"/lib/x86_64-linux-gnu/pkgconfig/*.pc
  ln -sf libsentencepiece.so.0 "$usr/lib/x86_64-linux-gnu/libsentencepiece.so" 2>/dev/null || true
  ln -sf libsentencepiece_train.so.0 "$usr/lib/x86_64-linux-gnu/libsentencepiece_train.so" 2>/dev/null || true
  export PKG_CONFIG_PATH=$usr/lib/x86_64-linux-gnu/pkgconfig
  export CPATH=$usr/include${CPATH:+:$CPATH}  # Boost's headers for Hera and GUDHI
  export LD_LIBRARY_PATH=$usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
elif [ "$mode" = check ] && ! has_system_libraries; then
  die "neither the system nor gpu_bundle/ has yaml-cpp and the other libraries" \
    "run 'bash scripts/gpu_check.sh --pack' on the development machine and carry gpu_bundle"
fi

# --- build against this machine's torch (a rehearsal uses the build CI made) ------------------------
if [ "$mode" = --rehearse ]; then
  [ -x "$build/ffnshape" ] && [ -x "$build/bench_train_speed" ] && [ -x "$build/tests/ffnshape_tests" ] ||
    die "no build in $build to rehearse with" "run scripts/build.sh first"
fi
[ "$mode" = --rehearse ] || {
section "building into $build"
torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
generator=()
command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ] && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$torch_prefix${prefix:+;$prefix/usr}" >"$out/configure.log" 2>&1 ||
  { tail -n 30 "$out/configure.log"; die "configuring failed (log above, whole in $out/configure.log)"; }
cmake --build "$build" --parallel "$(nproc)" >"$out/build.log" 2>&1 ||
  { grep -m 20 -E "error|Error" "$out/build.log"; die "building failed (whole log in $out/build.log)"; }
}
ffnshape=$build/ffnshape
"$ffnshape" version
echo "built in $(($(date +%s) - start)) s since the start"

# --- tests: the GoogleTest suite (CUDA tests run where a GPU is visible) -----------------------------
section "tests"
# The whole suite on the GPU machine. A rehearsal runs only the CUDA tests (they skip), and not through
# ctest, which may be running the rehearsal itself in the same build directory.
# A failure does not stop the measurements below; the script still exits non-zero at the end.
tests_failed=0
if [ "$mode" = check ] && [ "${GPU_CHECK_CTEST:-1}" = 1 ]; then
  (cd "$build" && ctest -j "$(nproc)" --timeout 300 -E "^(cli_|installed_|plot_|gpu_check)" >"$out/ctest.log" 2>&1) &&
    tail -n 3 "$out/ctest.log" || { grep -E "Failed|\*\*\*" "$out/ctest.log"; echo "gpu_check: tests FAILED (see $out/ctest.log)"; tests_failed=1; }
fi
"$build/tests/ffnshape_tests" --gtest_filter='Cuda.*' >"$out/cuda_tests.log" 2>&1 || tests_failed=1
grep -E "^\[ +(OK|FAILED|SKIPPED) |GPU:" "$out/cuda_tests.log" | sort -u || true

# --- speed of the 113M paper models, beside PyTorch eager -----------------------------------------
# A CPU without native bf16 products emulates them about 200x slower than fp32: there a rehearsal takes
# the same steps in fp32.
dtype=bf16
if [ "$device" = cpu ] && ! bash scripts/cpu_has_native_bf16.sh; then
  dtype=fp32
  echo "this CPU has no native bf16 products: the rehearsal runs its models in fp32"
fi
section "113M models in $dtype: ffnshape beside PyTorch eager"
configs="configs/paper/hourglass-113m-conventional.yaml configs/paper/hourglass-113m-hourglass-k4-l6.yaml"
if [ "$device" = cuda ]; then
  sizes=(--batch 8 --seq-len 2048 --steps "$steps" --warmup 3 --no-compile)
else
  sizes=(--batch 1 --seq-len 64 --steps 2 --warmup 1 --no-compile)
fi
BENCH=$build/bench_train_speed FFNSHAPE_CLI=$ffnshape PYTHON=$python bash bench/train_speed.sh \
  --configs "$configs" --dtypes "$dtype" --device "$device" --threads "$(nproc)" "${sizes[@]}" --out "$out/speed.md"

# --- the whole trainer: pinned batches, fused AdamW, progress line with memory and MFU -------------
section "ffnshape train: the 113M conventional model, $dtype"
data=$out/data
mkdir -p "$data"
"$python" - "$data" <<'EOF'
import random, struct, sys
# uint32 llm.c shards (magic 20240801, version 7) of a seeded Zipf-like stream over the 100352 ids
rng = random.Random(0)
for name, n in (("train_0.bin", 2_000_000), ("val_0.bin", 200_000)):
    tokens = [min(int(rng.paretovariate(1.1)) - 1, 100351) for _ in range(n)]
    with open(f"{sys.argv[1]}/{name}", "wb") as f:
        f.write(struct.pack("<256i", 20240801, 7, n, *([0] * 253)))
        f.write(struct.pack(f"<{n}I", *tokens))
EOF
if [ "$device" = cuda ]; then
  run_sizes=(--set train.steps=30 --set train.micro_batch=8 --set train.seq_len=2048 --set log.every=10)
else
  run_sizes=(--set train.steps=3 --set train.micro_batch=1 --set train.seq_len=64 --set log.every=1)
fi
rm -rf "$out/run"
"$ffnshape" train configs/paper/hourglass-113m-run.yaml --run-dir "$out/run" \
  --set "data.train=$data/train_*.bin" --set "data.val=$data/val_*.bin" --set train.grad_accum=1 \
  --set train.device="$device" --set train.precision="$dtype" --set eval.every=0 --set eval.batches=2 --set checkpoint.every=0 "${run_sizes[@]}"
"$python" -c "import json; s = json.load(open('$out/run/summary.json')); print({k: s[k] for k in ('device_name', 'tokens_per_s', 'mfu', 'peak_memory_bytes', 'final_loss')})"

# --- data parallel: 2 ranks over NCCL (Gloo on the CPU in a rehearsal), started by torchrun ---------
gpus=$("$python" -c 'import torch; print(torch.cuda.device_count())')
if [ "$device" = cpu ] || [ "$gpus" -ge 2 ]; then
  section "data parallel: 2 ranks, $([ "$device" = cuda ] && echo NCCL || echo Gloo)"
  launch=("$python" -m torch.distributed.run --standalone --nproc_per_node=2 --no-python)
  "${launch[@]}" "$build/tests/process_group_rank" 120000 bandwidth "$([ "$device" = cuda ] && echo 256 || echo 16)" 2>&1 |
    grep -E "bus bandwidth|rror" || tests_failed=1
  rm -rf "$out/run_ddp"
  "${launch[@]}" "$ffnshape" train configs/paper/hourglass-113m-run.yaml --run-dir "$out/run_ddp" \
    --set "data.train=$data/train_*.bin" --set "data.val=$data/val_*.bin" --set train.grad_accum=1 \
    --set train.device="$device" --set train.precision="$dtype" --set eval.every=0 --set eval.batches=2 --set checkpoint.every=0 "${run_sizes[@]}" \
    2>&1 | grep -vE "^(W|\*)" || tests_failed=1
  "$python" -c "import json; s = json.load(open('$out/run_ddp/summary.json')); print({k: s[k] for k in ('world_size', 'tokens_per_s', 'gradient_wait_s', 'final_loss')})" || tests_failed=1
else
  echo; echo "== data parallel: skipped ($gpus GPU visible; the 2-rank NCCL step needs 2 or more)"
fi

section "done in $(($(date +%s) - start)) s; results in $out (gpu_check.log, speed.md, ctest.log, run/)"
[ "$tests_failed" = 0 ] || die "some tests failed" "see $out/ctest.log"
