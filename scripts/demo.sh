#!/usr/bin/env bash
# The main command (until training lands): builds ffnshape and prints the parameter table of every
# shipped config, then re-solves the hourglass paper's 906M pair to 0.001%.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >/dev/null
ffnshape="${BUILD_DIR:-$root/build}/ffnshape"
cd "$root"
echo "== parameter counts of the shipped configs"
"$ffnshape" params configs/reference/*.yaml configs/paper/*.yaml configs/demo/*.yaml
echo
echo "== the 906M hourglass re-solved to the conventional 906M budget (d_model and d_h free)"
"$ffnshape" iso configs/paper/hourglass-906m-hourglass.yaml --match configs/paper/hourglass-906m-conventional.yaml \
  --count non_embedding --free d_model=1024..4096,ffn.hidden=256..4096
