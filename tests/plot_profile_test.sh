#!/usr/bin/env bash
# scripts/plot_profile.py on synthetic inputs: a full profile with diagnostics and two schedules, a profile
# holding a subset of the statistics, and the exit code 2 on missing or invalid files. Skips (exit 0) when
# /usr/bin/python3 lacks matplotlib. Environment: PYTHON (default /usr/bin/python3).
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"
PYTHON=${PYTHON:-/usr/bin/python3}
script="$(cd "$(dirname "$0")/.." && pwd)/scripts/plot_profile.py"

if ! "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: $PYTHON lacks matplotlib (apt-get install -y python3-matplotlib)"
  exit 0
fi

"$PYTHON" - "$tmp" <<'PY'
import json, math, sys
d = sys.argv[1]
L = 4
layers = []
for l in range(L):
    front = math.exp(-l)
    layers.append({
        "layer": l,
        "work": {s: {"raw": 10.0 * (l + 1) * scale, "spherical": front * scale, "hyperbolic": 2 * front * scale}
                 for s, scale in (("shift", 1.0), ("gw", 1e-3), ("topo", 0.5))},
        "residual_norm": {"in": 5.0 + 10 * l, "out": 12.0 + 10 * l},
        "intrinsic_dimension": {"in": 3.0 + l, "out": 2.5 + l},
        "sensitivity": {"ablate": 2.0 * front, "noise:0.1": -0.001 if l == 2 else 0.01 * front},
    })
profile = {"format": "ffnshape-profile", "version": 1, "n_layers": L,
           "provenance": {"checkpoint": "synthetic/step_00000010", "step": "10"},
           "settings": {"tokens": 64, "radius": 0.8}, "seconds": 0.1, "layers": layers, "base_loss": 4.2,
           "additivity": [{"layers": [i, i + 1], "perturbation": "ablate", "joint": 1.0, "sum": 0.9, "ratio": 1.1}
                          for i in range(L - 1)],
           "spearman": {"gw:spherical|ablate": 0.8, "topo:hyperbolic|ablate": 1.0}}
json.dump(profile, open(f"{d}/profile.json", "w"))
for l in layers:  # a subset: GW under one geometry, no diagnostics
    l["work"] = {"gw": {"spherical": l["work"]["gw"]["spherical"]}}
    for key in ("residual_norm", "intrinsic_dimension", "sensitivity"):
        del l[key]
json.dump({"format": "ffnshape-profile", "version": 1, "n_layers": L, "layers": layers},
          open(f"{d}/subset.json", "w"))
for rule, widths in (("uniform", [512] * L), ("topo:hyperbolic", [768, 640, 384, 256])):
    json.dump({"format": "ffnshape-schedule", "version": 1, "rule": rule, "n_layers": L, "uniform_width": 512,
               "widths": widths, "target": widths}, open(f"{d}/{rule.replace(':', '_')}.json", "w"))
PY
printf '{"format": "ffnshape-profile", "layers": [' >"$tmp/truncated.json"

# is_png FILE DESCRIPTION
is_png() {
  checks=$((checks + 1))
  if [[ ! -s "$1" ]] || [[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]]; then
    echo "FAIL: $2: $1 is missing or not a PNG"
    failures=$((failures + 1))
  fi
}

expect 0 "full profile with schedules" -- "$PYTHON" "$script" "$tmp/profile.json" \
  --schedule "$tmp/uniform.json" "$tmp/topo_hyperbolic.json" --out "$tmp/full.png"
contains "wrote $tmp/full.png" "$out" "full profile"
is_png "$tmp/full.png" "full profile"

expect 0 "subset profile, schedule flag repeated" -- "$PYTHON" "$script" "$tmp/subset.json" \
  --schedule "$tmp/uniform.json" --schedule "$tmp/topo_hyperbolic.json" --out "$tmp/subset.png" --dpi 60
is_png "$tmp/subset.png" "subset profile"

expect 0 "profile alone" -- "$PYTHON" "$script" "$tmp/subset.json" --out "$tmp/alone.png"
is_png "$tmp/alone.png" "profile alone"

expect 2 "missing profile" -- "$PYTHON" "$script" "$tmp/nope.json" --out "$tmp/x.png"
contains "does not exist" "$err" "missing profile"
expect 2 "missing schedule" -- "$PYTHON" "$script" "$tmp/profile.json" --schedule "$tmp/nope.json" --out "$tmp/x.png"
contains "nope.json does not exist" "$err" "missing schedule"
expect 2 "truncated JSON" -- "$PYTHON" "$script" "$tmp/truncated.json" --out "$tmp/x.png"
contains "not valid JSON" "$err" "truncated JSON"
expect 2 "schedule passed as the profile" -- "$PYTHON" "$script" "$tmp/uniform.json" --out "$tmp/x.png"
contains "not an ffnshape-profile file" "$err" "wrong format"
expect 2 "no --out" -- "$PYTHON" "$script" "$tmp/profile.json"
checks=$((checks + 1))
if [[ -e "$tmp/x.png" ]]; then
  echo "FAIL: a failed run wrote $tmp/x.png"
  failures=$((failures + 1))
fi

[[ -z "${KEEP_PNG:-}" ]] || cp "$tmp"/*.png "$KEEP_PNG"
finish "plot_profile"
