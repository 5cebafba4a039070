#!/usr/bin/env bash
# End-to-end checks of `ffnshape geometry` on CSV point clouds, against reference programs run on the same
# points: the ripser program (H1 pairs), POT (Gromov-Wasserstein), GUDHI with POT (diagram distance) and
# numpy (distances, shift); then the answers to bad input (exit code 2, a message naming file and line).
# Environment: FFNSHAPE (the binary). Reference tools: Debian's /usr/bin/python3 with numpy (python3-pot and
# python3-gudhi where installed) and /usr/bin/ripser; the checks that need a missing one are skipped.
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"

PY=${REFERENCE_PYTHON:-/usr/bin/python3}
RIPSER=${RIPSER:-/usr/bin/ripser}
threshold=1.0  # between the birth (about 0.4) and the death (about 1.7) of the circle's loop
if ! "$PY" -c "import numpy" 2>/dev/null; then
  echo "skip: $PY with numpy makes the clouds and the reference values"
  exit 77
fi

# The clouds, written with every float64 digit so both sides read the same numbers: a noisy circle (one
# long-lived loop) with a comment and a blank line, a copy moved by noise (shift), a Gaussian blob; and for
# ripser, the circle without comments and the blob's spherical distances (lower triangle).
"$PY" - "$tmp" <<'EOF' || fail "making the clouds"
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
t = rng.uniform(0, 2 * np.pi, 60)
circle = np.c_[np.cos(t), np.sin(t), np.zeros(60)] + 0.05 * rng.normal(size=(60, 3))
moved = circle + 0.1 * rng.normal(size=circle.shape)
blob = rng.normal(size=(80, 5))
hard = rng.normal(size=(300, 64))  # Gaussian noise in 64-D: persistence under angular distances is very costly
def write(name, rows, preamble=""):
    with open(f"{d}/{name}.csv", "w") as f:
        f.write(preamble + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in rows))
write("circle", circle, "# a noisy circle in 3-D\n\n")
write("circle_plain", circle)
write("moved", moved)
write("blob", blob)
write("hard", hard)
u = blob / np.linalg.norm(blob, axis=1, keepdims=True)
angles = np.arccos(np.clip(u @ u.T, -1, 1))
write("blob_spherical_lower", [angles[i, :i] for i in range(1, len(angles))])
EOF

run_json() {  # NAME DESCRIPTION ARGS...: runs ffnshape geometry ARGS --json and keeps its answer as NAME.json
  local name=$1 what=$2
  shift 2
  expect 0 "$what" -- "$FFNSHAPE" geometry "$@" --json
  cp "$tmp/out" "$tmp/$name.json"
}

# H1 pairs: raw points, spherical distances, and a threshold that leaves the circle's loop alive (death null).
run_json ph_circle "ph circle" ph "$tmp/circle.csv"
run_json ph_circle_t "ph circle --threshold" ph "$tmp/circle.csv" --threshold "$threshold"
run_json ph_blob "ph blob" ph "$tmp/blob.csv"
run_json ph_blob_sph "ph blob spherical" ph "$tmp/blob.csv" --geometry spherical
if [ -x "$RIPSER" ]; then
  "$RIPSER" --format point-cloud --dim 1 "$tmp/circle_plain.csv" >"$tmp/ripser_circle.txt"
  "$RIPSER" --format point-cloud --dim 1 --threshold "$threshold" "$tmp/circle_plain.csv" >"$tmp/ripser_circle_t.txt"
  "$RIPSER" --format point-cloud --dim 1 "$tmp/blob.csv" >"$tmp/ripser_blob.txt"
  "$RIPSER" --format lower-distance --dim 1 "$tmp/blob_spherical_lower.csv" >"$tmp/ripser_blob_sph.txt"
else
  echo "skip: $RIPSER is missing, the H1 pairs are not compared with the ripser program"
fi
# Gromov-Wasserstein under all three geometries and both solvers, the topology distance, the shift.
run_json gw_raw "gw raw" gw "$tmp/circle.csv" "$tmp/blob.csv"
run_json gw_sph "gw spherical" gw "$tmp/circle.csv" "$tmp/blob.csv" --geometry spherical
run_json gw_hyp "gw hyperbolic" gw "$tmp/blob.csv" "$tmp/circle.csv" --geometry hyperbolic --radius 0.7
run_json gw_ent "gw entropic" gw "$tmp/circle.csv" "$tmp/moved.csv" --solver entropic --epsilon 0.1
run_json topo "topo hyperbolic" topo "$tmp/circle.csv" "$tmp/blob.csv" --geometry hyperbolic
run_json topo_l2 "topo hyperbolic L2" topo "$tmp/circle.csv" "$tmp/blob.csv" --geometry hyperbolic --topo-norm l2
run_json shift_raw "shift raw" shift "$tmp/circle.csv" "$tmp/moved.csv"
run_json shift_sph "shift spherical" shift "$tmp/circle.csv" "$tmp/moved.csv" --geometry spherical

# The reference side, in one process: distances by the definitions in include/ffnshape/geometry/metrics.h,
# written independently; each check prints "ok ..." or its failure, a missing reference tool "skip: ...".
report=$("$PY" - "$tmp" "$RIPSER" 2>&1 <<'EOF'
import json, os, re, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
d, ripser = sys.argv[1], sys.argv[2]
def cloud(name):
    return np.loadtxt(f"{d}/{name}.csv", delimiter=",", comments="#", ndmin=2)
def distances(x, geometry="raw", radius=0.8):
    if geometry == "raw":
        return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    if geometry == "spherical":
        return np.arccos(np.clip(u @ u.T, -1, 1))
    p = radius * u  # points of the Poincare ball at |p| = radius
    sq = ((p[:, None, :] - p[None, :, :]) ** 2).sum(-1)
    return np.arccosh(1 + 2 * sq / ((1 - radius**2) * (1 - radius**2)))
def ours(name):
    return json.load(open(f"{d}/{name}.json"))
def check(good, what):
    print(("ok " if good else "") + what)
def close(a, b, rel, what):
    check(abs(a - b) <= rel * max(abs(a), abs(b), 1e-12), f"{what}: ffnshape {a!r}, reference {b!r}")
def ripser_h1(name):
    text = open(f"{d}/{name}.txt").read().split("persistence intervals in dim 1:")[1]
    pairs = re.findall(r"\[\s*([^,\s]+)\s*,\s*([^)\s]*)\s*\)", text)
    return [(float(b), float(e) if e else float("inf")) for b, e in pairs]
def same_diagram(mine, theirs, what, rel=1e-4):
    # ripser computes in float32: pairs shorter than its resolution may vanish there, so they are not compared.
    scale = max([abs(b) for b, _ in mine + theirs] + [1.0])
    keep = lambda pairs: sorted((b, e) for b, e in pairs if e - b > 1e-5 * scale)
    mine, theirs = keep([(b, float("inf") if e is None else e) for b, e in mine]), keep(theirs)
    if len(mine) != len(theirs) or not mine:
        return check(False, f"{what}: {len(mine)} H1 pairs, reference {len(theirs)}")
    worst = max(abs(x - y) / scale if np.isfinite(x) or np.isfinite(y) else 0.0
                for p, q in zip(mine, theirs) for x, y in zip(p, q))
    check(worst <= rel, f"{what}: {len(mine)} pairs, largest difference {worst:.2e} of the scale")

j, jt = ours("ph_circle"), ours("ph_circle_t")
check((j["points"], j["dimensions"], j["geometry"], j["threshold"]) == (60, 3, "raw", None), f"ph context {j}")
check(max(e - b for b, e in j["h1"]) > 1.0, f"the circle has a long-lived loop: {j['h1']}")
check(jt["threshold"] == 1.0 and [e for _, e in jt["h1"]].count(None) == 1,
      f"one loop never dies below the threshold: {jt['h1']}")
if os.access(ripser, os.X_OK):
    same_diagram(j["h1"], ripser_h1("ripser_circle"), "ph circle vs ripser")
    same_diagram(jt["h1"], ripser_h1("ripser_circle_t"), "ph circle --threshold vs ripser --threshold")
    same_diagram(ours("ph_blob")["h1"], ripser_h1("ripser_blob"), "ph blob vs ripser")
    same_diagram(ours("ph_blob_sph")["h1"], ripser_h1("ripser_blob_sph"), "ph blob spherical vs ripser on numpy distances")

try:
    import ot
except ImportError:
    ot = None
    print("skip: no POT (import ot): Gromov-Wasserstein and topology are not compared")
if ot:
    def pot(a, b, geometry="raw", radius=0.8, epsilon=None):
        C1, C2 = distances(cloud(a), geometry, radius), distances(cloud(b), geometry, radius)
        p, q = ot.unif(len(C1)), ot.unif(len(C2))
        if epsilon:
            return ot.gromov.entropic_gromov_wasserstein2(C1, C2, p, q, "square_loss", epsilon)
        return ot.gromov.gromov_wasserstein2(C1, C2, p, q, "square_loss")
    jh = ours("gw_hyp")
    check((jh["geometry"], jh["radius"], jh["solver"], jh["a"]["points"], jh["b"]["dimensions"]) ==
          ("hyperbolic", 0.7, "cg", 80, 3), f"gw context {jh}")
    close(ours("gw_raw")["gw"], pot("circle", "blob"), 1e-4, "gw raw vs POT")
    close(ours("gw_sph")["gw"], pot("circle", "blob", "spherical"), 1e-4, "gw spherical vs POT")
    close(jh["gw"], pot("blob", "circle", "hyperbolic", 0.7), 1e-4, "gw hyperbolic vs POT")
    close(ours("gw_ent")["gw"], pot("circle", "moved", epsilon=0.1), 1e-4, "gw entropic vs POT")
try:
    import gudhi, gudhi.wasserstein
except ImportError:
    gudhi = None
    print("skip: no GUDHI: the diagram distance is not compared")
if ot and gudhi:
    def h1(name):
        rips = gudhi.RipsComplex(distance_matrix=distances(cloud(name), "hyperbolic"))
        tree = rips.create_simplex_tree(max_dimension=2)
        tree.persistence()
        return tree.persistence_intervals_in_dimension(1)
    a, b, jp = h1("circle"), h1("blob"), ours("topo")
    check((jp["a"]["h1_pairs"], jp["b"]["h1_pairs"]) == (len(a), len(b)), f"topo pair counts {jp}, GUDHI {len(a)}, {len(b)}")
    close(jp["topo"], gudhi.wasserstein.wasserstein_distance(a, b, order=2, internal_p=np.inf), 1e-6, "topo vs GUDHI")
    j2 = ours("topo_l2")
    check((jp["internal_norm"], j2["internal_norm"]) == ("L-infinity", "L2"), f"topo norms {jp}, {j2}")
    close(j2["topo"], gudhi.wasserstein.wasserstein_distance(a, b, order=2, internal_p=2), 1e-6, "topo L2 vs GUDHI")

x, y = cloud("circle"), cloud("moved")
close(ours("shift_raw")["shift"], np.linalg.norm(x - y, axis=1).mean(), 1e-9, "shift raw vs numpy")
u, v = (z / np.linalg.norm(z, axis=1, keepdims=True) for z in (x, y))
close(ours("shift_sph")["shift"], np.arccos(np.clip((u * v).sum(1), -1, 1)).mean(), 1e-9, "shift spherical vs numpy")
EOF
)
grep '^skip: ' <<<"$report"
problems=$(grep -v -e '^ok ' -e '^skip: ' <<<"$report" | grep .)
passed=$(grep -c '^ok ' <<<"$report")
broken=$(grep -c . <<<"$problems")
checks=$((checks + passed + broken))
failures=$((failures + broken))
[ -z "$problems" ] || sed 's/^/FAIL: /' <<<"$problems"

# Human output.
expect 0 "ph table" -- "$FFNSHAPE" geometry ph "$tmp/circle.csv" --threshold "$threshold"
contains "60 points in 3 dimensions" "$out" "ph table"
contains "inf" "$out" "ph table shows the loop that never dies"
expect 0 "gw line" -- "$FFNSHAPE" geometry gw "$tmp/circle.csv" "$tmp/blob.csv"
contains "Gromov-Wasserstein" "$out" "gw line"

# A hard cloud stops at its persistence budget with a message saying what to change (exit 1).
expect 1 "ph past its memory budget" -- "$FFNSHAPE" geometry ph "$tmp/hard.csv" --geometry spherical --ph-memory 0.004
contains "300 points stopped at its memory budget" "$err" "memory budget message"
contains "use fewer points, a threshold" "$err" "memory budget advice"
expect 1 "topo past its time budget" -- "$FFNSHAPE" geometry topo "$tmp/hard.csv" "$tmp/blob.csv" --geometry spherical \
  --ph-seconds 0.01
contains "stopped at its time budget" "$err" "time budget message"

# Bad input: exit 2, the file and line named, no stack trace.
printf '1,2,3\n4,5,6\n7,abc,9\n' >"$tmp/word.csv"
printf '1,2,3\n# comment\n4,5,6\n7,8\n' >"$tmp/ragged.csv"
printf '1,2,3\n4,5,6\n' >"$tmp/two.csv"
printf '1,2,3\nnan,5,6\n7,8,9\n' >"$tmp/nan.csv"
printf '1,2,3\n4,5,6\n0,0,0\n' >"$tmp/zero.csv"
bad() {  # DESCRIPTION TEXT ARGS...: exit 2 with TEXT in the message
  local what=$1 text=$2
  shift 2
  expect 2 "$what" -- "$FFNSHAPE" geometry "$@"
  contains "$text" "$err" "$what message"
  [[ "$err" != *"frame #"* && "$err" != *"Exception raised"* ]] || fail "$what: stack trace in the message"
}
bad "missing file" "none.csv': No such file" ph "$tmp/none.csv"
bad "non-numeric field" "word.csv:3: column 2: 'abc' is not a number" gw "$tmp/circle.csv" "$tmp/word.csv"
bad "ragged rows" "ragged.csv:4: 2 values, but the first point (line 1) has 3" ph "$tmp/ragged.csv"
bad "two points" "two.csv' has 2 points" topo "$tmp/two.csv" "$tmp/circle.csv"
bad "NaN" "nan.csv:2: column 1: 'nan' is not a finite number" ph "$tmp/nan.csv"
bad "unknown geometry" "unknown geometry 'elliptic'" ph "$tmp/circle.csv" --geometry elliptic
bad "zero vector under spherical" "zero.csv:3: point 3 is the zero vector" ph "$tmp/zero.csv" --geometry spherical
bad "shift of different shapes" "shift needs corresponding points" shift "$tmp/circle.csv" "$tmp/blob.csv"
bad "epsilon with cg" "--epsilon: applies only to the entropic solver" gw "$tmp/circle.csv" "$tmp/blob.csv" --epsilon 0.1

finish cli_geometry
