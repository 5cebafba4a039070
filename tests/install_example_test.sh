#!/usr/bin/env bash
# Installs a built ffnshape into a temporary prefix, then configures, builds and runs the external
# example examples/custom_block against that prefix through find_package(ffnshape).
#
#   bash tests/install_example_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

fail() {
  echo "install_example_test: FAILED: $*" >&2
  exit 1
}

[[ $# -eq 2 ]] || fail "usage: $0 BUILD_DIR SOURCE_DIR"
build_dir=$(cd "$1" && pwd) || fail "no build directory $1"
source_dir=$(cd "$2" && pwd) || fail "no source directory $2"
example_dir="$source_dir/examples/custom_block"
[[ -f "$build_dir/CMakeCache.txt" ]] || fail "$build_dir is not a configured CMake build directory"
[[ -f "$example_dir/CMakeLists.txt" ]] || fail "no example project at $example_dir"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ffnshape-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
example_build="$tmp/build"

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

echo "== installing $build_dir into $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install $build_dir did not succeed (is the project built?)"; }
config_file=$(find "$prefix" -name ffnshapeConfig.cmake -print -quit)
[[ -n "$config_file" ]] || fail "the install has no ffnshapeConfig.cmake"
echo "   package config: ${config_file#"$prefix"/}"
# The installed ffnshape finds its plot scripts at BIN/../share/ffnshape/scripts, and they import
# their helpers from there.
scripts="$prefix/bin/../share/ffnshape/scripts"
[[ -x "$prefix/bin/ffnshape" ]] || fail "the install has no bin/ffnshape"
for script in plot_experiment.py plot_sweep.py plot_runs.py plot_profile.py plot_layer_stats.py compare_arms.py; do
  [[ -f "$scripts/$script" ]] || fail "the install has no share/ffnshape/scripts/$script"
done
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import experiment_stats' "$scripts" ||
  fail "share/ffnshape/scripts/experiment_stats.py does not import"
echo "   plot scripts: share/ffnshape/scripts"

# The package finds LibTorch as its users do: through the LibTorch the library was built against.
torch_dir=$(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
[[ -n "$torch_dir" ]] || fail "$build_dir/CMakeCache.txt names no Torch_DIR"
echo "== configuring $example_dir ${generator[*]} (Torch_DIR $torch_dir)"
cmake -S "$example_dir" -B "$example_build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DTorch_DIR="$torch_dir" ||
  fail "configuring the example against the installed package failed"

echo "== building the example"
start=$(date +%s)
cmake --build "$example_build" -j 2 || fail "building the example against the installed package failed"
echo "   built in $(($(date +%s) - start)) s"

echo "== running the example"
set +e
output=$("$example_build/custom_block" 2>&1)
status=$?
set -e
echo "$output"
[[ $status -eq 0 ]] || fail "the example exited with status $status"
grep -q "custom_block ok" <<<"$output" || fail "the example's output lacks 'custom_block ok'"
echo "install_example_test: PASSED"
