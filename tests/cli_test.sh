#!/usr/bin/env bash
# End-to-end checks of the ffnshape command line: outputs, JSON fields and exit codes.
# Environment: FFNSHAPE (the binary), SOURCE_DIR (the repository).
set -uo pipefail
cd "$SOURCE_DIR"
source "$(dirname "$0")/cli_lib.sh"

json_field() { python3 -c "import json,sys; d=json.load(open('$tmp/out')); print(d$1)"; }

expect 0 "version" -- "$FFNSHAPE" version --json
python3 - "$tmp/out" "${SOURCE_DIR:-.}" <<'PY' || fail "version --json fields"
import json, os, subprocess, sys
v = json.load(open(sys.argv[1]))
for key in ("ffnshape", "libtorch", "cuda_compiled", "cuda_version", "cuda_devices", "distributed"):
    assert key in v, key
assert isinstance(v["cuda_devices"], list) and isinstance(v["distributed"], list), v
assert "gloo" in v["distributed"], v
venv_python = os.path.join(sys.argv[2], ".venv", "bin", "python")
if os.path.exists(venv_python):  # the build's LibTorch is the venv's torch: the versions must agree
    torch_version, cuda = subprocess.check_output(
        [venv_python, "-c", "import torch; print(torch.__version__.split('+')[0], torch.version.cuda)"], text=True).split()
    assert v["libtorch"] == torch_version, (v["libtorch"], torch_version)
    assert v["cuda_compiled"] == (cuda != "None") and (cuda == "None" or v["cuda_version"] == cuda), (v, cuda)
PY
expect 0 "--version" -- "$FFNSHAPE" --version
contains "ffnshape 0.1.0 (LibTorch" "$out" "--version line"

expect 0 "params table" -- "$FFNSHAPE" params configs/reference/llama-2-7b.yaml
contains "6,738,415,616" "$out" "params table total"
contains "non_embedding" "$out" "params table"

expect 0 "params json" -- "$FFNSHAPE" params configs/reference/llama-2-7b.yaml --json
for field in total embedding attention ffn norm head non_embedding; do
  value=$(json_field "['$field']")
  contains "" "$value" "json field $field"
  [[ "$value" =~ ^[0-9]+$ ]] || { echo "FAIL: json field $field is not an integer: $value"; failures=$((failures + 1)); }
done
contains "6738415616" "$(json_field "['total']")" "llama-2-7b total"

expect 0 "params --set" -- "$FFNSHAPE" params configs/reference/llama-2-7b.yaml --json --set model.tie_embeddings=true
contains "6607343616" "$(json_field "['total']")" "tied llama-2-7b total"

expect 0 "params list override" -- "$FFNSHAPE" params configs/demo/conventional.yaml --json \
  --set "model.ffn.widths=[512, 512, 1024, 1024, 256, 256]"
contains "[512, 512, 1024, 1024, 256, 256]" "$(json_field "['ffn_widths']")" "per-layer widths"

expect 0 "params several configs" -- "$FFNSHAPE" params configs/reference/llama-2-7b.yaml configs/reference/olmo-2-1b.yaml
contains "1,484,916,736" "$out" "two-config table"

printf 'model:\n  d_model: 64\n  n_layers: 2\n  n_heads: 4\n  ffn: {hidden: 128, hiden: 3}\n' >"$tmp/typo.yaml"
expect 2 "unknown key" -- "$FFNSHAPE" params "$tmp/typo.yaml"
contains "typo.yaml:5: model.ffn.hiden: unknown key" "$err" "unknown key message"

printf 'model:\n  d_model: 66\n  n_layers: 2\n  n_heads: 4\n  ffn: {hidden: 128}\n' >"$tmp/indivisible.yaml"
expect 2 "indivisible d_model" -- "$FFNSHAPE" params "$tmp/indivisible.yaml"
contains "model.head_dim" "$err" "indivisible message"
contains "fix:" "$err" "indivisible hint"

printf 'model:\n  d_model: [64\n' >"$tmp/broken.yaml"
expect 2 "malformed yaml" -- "$FFNSHAPE" params "$tmp/broken.yaml"
contains "malformed YAML" "$err" "malformed message"

expect 2 "missing file" -- "$FFNSHAPE" params "$tmp/none.yaml"
expect 2 "bad --set" -- "$FFNSHAPE" params configs/reference/llama-2-7b.yaml --set model.n_kv_heads=5
contains "--set model.n_kv_heads" "$err" "bad --set message"
expect 2 "unknown subcommand" -- "$FFNSHAPE" frobnicate
expect 2 "no subcommand" -- "$FFNSHAPE"
expect 0 "help" -- "$FFNSHAPE" --help
contains "iso" "$out" "help lists iso"

# The iso solver: the 906M public pair re-solved, written out, and read back.
expect 0 "iso --match" -- "$FFNSHAPE" iso configs/paper/hourglass-906m-hourglass.yaml \
  --match configs/paper/hourglass-906m-conventional.yaml --free d_model=1024..4096/16,ffn.hidden \
  --out "$tmp/solved.yaml" --json
python3 -c "
import json; d = json.load(open('$tmp/out'))
assert abs(d['rel_error']) <= 1e-5, d
assert d['within_tolerance'] and set(d['dimensions']) == {'d_model', 'ffn.hidden'}, d
assert abs(d['total'] - d['budget']) <= 1e-5 * d['budget'], d
" || { echo "FAIL: iso json"; failures=$((failures + 1)); }
budget=$(json_field "['budget']")
expect 0 "solved config loads" -- "$FFNSHAPE" params "$tmp/solved.yaml" --json
solved_total=$(json_field "['total']")
python3 -c "assert abs($solved_total - $budget) <= 1e-5 * $budget" || { echo "FAIL: solved config total $solved_total vs $budget"; failures=$((failures + 1)); }

expect 0 "iso --budget with suffix" -- "$FFNSHAPE" iso configs/demo/hourglass.yaml --budget 8M --free d_model/8,ffn.hidden
contains "solved" "$out" "iso text output"

expect 1 "iso unreachable" -- "$FFNSHAPE" iso configs/paper/hourglass-113m-conventional.yaml --budget 150M --free n_layers --out "$tmp/never.yaml"
contains "changes the count by" "$out" "unreachable explanation"
[ ! -e "$tmp/never.yaml" ] || { echo "FAIL: an unmet solve wrote --out"; failures=$((failures + 1)); }

expect 2 "iso without budget" -- "$FFNSHAPE" iso configs/demo/hourglass.yaml --free d_model
expect 2 "iso bad dimension" -- "$FFNSHAPE" iso configs/demo/hourglass.yaml --budget 8M --free vocab
contains "not a dimension" "$err" "bad dimension message"
expect 2 "iso bad budget" -- "$FFNSHAPE" iso configs/demo/hourglass.yaml --budget lots --free d_model

finish cli
