#!/usr/bin/env bash
# Side-by-side Gromov-Wasserstein speed: ffnshape (bench_gw_speed) versus POT 0.8.2
# (ot.gromov.gromov_wasserstein2 and entropic_gromov_wasserstein2) on the same distance matrices: seeded
# Gaussian clouds, Euclidean distances divided by their maximum, written once as float64 and read by both
# sides. Median of --repeats timings per side; checks the values agree; prints a table with the ratio
# ffnshape / POT of the times (below 1: ffnshape is faster). Builds nothing.
#
#   BENCH=build/bench_gw_speed bash bench/gw_speed.sh [--sizes "256 512 512x384"] [--dim 64] [--repeats 3]
#       [--epsilon 5e-3] [--solvers "cg entropic"] [--out table.md]
#
# A size N compares two clouds of N points; NxM compares N points with M.
# Environment: BENCH (default build/bench_gw_speed), PYTHON (default /usr/bin/python3, Debian's python3-pot;
# the first python3 on PATH may not have it).
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/bench_gw_speed}
PYTHON=${PYTHON:-/usr/bin/python3}
sizes="256 512 512x384" dim=64 repeats=3 epsilon=5e-3 solvers="cg entropic" out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --dim) dim=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --epsilon) epsilon=$2; shift 2 ;;
    --solvers) solvers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BENCH" ]] || { echo "error: $BENCH is not an executable; build it (target bench_gw_speed) or set BENCH" >&2; exit 2; }
"$PYTHON" -c 'import ot, numpy' 2>/dev/null || {
  echo "error: $PYTHON cannot import ot: apt-get install -y python3-pot" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for n in $sizes; do
  "$PYTHON" - "${n%x*}" "${n#*x}" "$dim" "$work/$n" <<'EOF'
import sys, numpy as np
n, m, dim, prefix = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(n * 100003 + m)
for name, k in (("dx", n), ("dy", m)):
    x = rng.standard_normal((k, dim)) * (np.linspace(1.5, 0.5, dim) if name == "dy" else 1.0)
    d = np.sqrt(np.maximum(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1), 0.0))
    d = 0.5 * (d + d.T)
    (d / d.max()).astype("<f8").tofile(f"{prefix}.{name}.f64")
EOF
  echo "n=$n: ffnshape ..." >&2
  "$BENCH" --dx "$work/$n.dx.f64" --dy "$work/$n.dy.f64" --repeats "$repeats" --epsilon "$epsilon" \
    --solvers "${solvers// /,}" > "$work/$n.cpp.json"
  echo "n=$n: POT ..." >&2
  "$PYTHON" - "$work/$n" "$repeats" "$epsilon" "$solvers" > "$work/$n.py.json" <<'EOF'
import json, statistics, sys, time, warnings
import numpy as np, ot
prefix, repeats, epsilon, solvers = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4].split()
warnings.simplefilter("ignore")
dx, dy = (np.fromfile(f"{prefix}.{name}.f64", dtype="<f8") for name in ("dx", "dy"))
dx, dy = dx.reshape(int(round(len(dx) ** 0.5)), -1), dy.reshape(int(round(len(dy) ** 0.5)), -1)
p, q = ot.unif(len(dx)), ot.unif(len(dy))
run = {"cg": lambda: ot.gromov.gromov_wasserstein2(dx, dy, p, q, "square_loss"),
       "entropic": lambda: ot.gromov.entropic_gromov_wasserstein2(dx, dy, p, q, "square_loss", epsilon)}
out = {"n": len(dx), "m": len(dy)}
for name in solvers:
    seconds = []
    for _ in range(repeats):
        t = time.perf_counter()
        value = float(run[name]())
        seconds.append(time.perf_counter() - t)
    out[name] = {"value": value, "seconds": statistics.median(seconds)}
print(json.dumps(out))
EOF
done

"$PYTHON" - "$work" "$out" "$sizes" "$dim" "$repeats" "$epsilon" "$solvers" <<'EOF'
import json, os, sys
work, out, sizes, dim, repeats, epsilon, solvers = sys.argv[1:]
lines = [f"Gromov-Wasserstein, square loss, uniform weights; {dim}-D Gaussian clouds, distances / max; "
         f"median of {repeats} run(s) per side; entropic epsilon {epsilon}",
         "",
         "| points | solver | ffnshape s | POT s | ratio ffnshape/POT | ffnshape value | POT value | rel. diff |",
         "|---:|---|---:|---:|---:|---:|---:|---:|"]
worst_cg, agree = None, True
for n in sizes.split():
    cpp, py = (json.load(open(os.path.join(work, f"{n}.{side}.json"))) for side in ("cpp", "py"))
    for name in solvers.split():
        a, b = cpp[name], py[name]
        ratio = a["seconds"] / b["seconds"]
        diff = abs(a["value"] - b["value"]) / abs(b["value"])
        agree &= diff < 1e-4
        if name == "cg":
            worst_cg = ratio if worst_cg is None else max(worst_cg, ratio)
        lines.append(f"| {n} | {name} | {a['seconds']:.3f} | {b['seconds']:.3f} | {ratio:.3f} | "
                     f"{a['value']:.8g} | {b['value']:.8g} | {diff:.1e} |")
lines.append("")
if worst_cg is not None:
    lines.append(f"cg: highest time ratio ffnshape/POT {worst_cg:.3f} "
                 f"({'no slower than POT in every row' if worst_cg <= 1.0 else 'SLOWER than POT in at least one row'})")
lines.append("values agree within 1e-4 relative" if agree else "VALUES DIFFER by more than 1e-4 relative")
text = "\n".join(lines)
print(text)
if out:
    with open(out, "w") as f:
        f.write(text + "\n")
sys.exit(0 if agree else 1)
EOF
