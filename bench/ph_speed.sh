#!/usr/bin/env bash
# Degree-1 Vietoris-Rips persistence: ffnshape's rips_h1 (bench_ph_speed) versus the ripser program on
# the same distance matrices, with GUDHI's Python module for information. Builds nothing: point $BENCH at
# a built bench_ph_speed.
#
#   BENCH=build/bench_ph_speed bash bench/ph_speed.sh [--sizes "128x8 256x16 512x64"] [--repeats 5]
#       [--gudhi-max 512] [--out table.md]
#
# Environment: BENCH (default build/bench_ph_speed), RIPSER (default /usr/bin/ripser), PYTHON (default
# /usr/bin/python3, Debian's python with numpy and python3-gudhi; the first python3 on PATH may lack them).
#
# For each size NxD: N Gaussian points in D dimensions (seed 0), Euclidean distances written once as a
# lower-triangular text file with %.17g, which both sides read.
#
# What is timed, and why it is fair:
#   ours          the rips_h1 call inside bench_ph_speed (validation, copy, degree 0 and degree 1), not the
#                 reading of the file nor the start of the process (which loads libtorch).
#   ripser        the whole `ripser --format lower-distance --dim 1` process, minus the whole process on
#                 the same file with `--threshold 0` (start-up plus reading and parsing the file, no
#                 edges to work on). The difference is ripser's own degree-0 and degree-1 work, the same
#                 work as ours. (`--dim 0` is no baseline: Debian's ripser 1.2.1 aborts on it.)
# Both sides run in alternation, --repeats times, each in a fresh process; the table gives medians. The
# ratio ours/ripser is against that difference; ours/ripser-process (against the whole ripser process)
# is shown too. The diagrams are checked to agree: every bar longer than 2e-5 of the largest distance
# must match one of the other side's bars to within that (ripser computes in float32 and prints 6
# significant digits). GUDHI (RipsComplex with the enclosing radius as threshold, which changes no bar,
# + simplex tree + cohomology over Z/2) runs once per size up to --gudhi-max points; it is slow.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCH=${BENCH:-build/bench_ph_speed}
RIPSER=${RIPSER:-/usr/bin/ripser}
PYTHON=${PYTHON:-/usr/bin/python3}
sizes="128x8 256x16 512x64" repeats=5 gudhi_max=512 out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --gudhi-max) gudhi_max=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x "$BENCH" ]] || { echo "error: $BENCH is not an executable; build it (target bench_ph_speed) or set BENCH" >&2; exit 2; }
[[ -x "$RIPSER" ]] || { echo "error: $RIPSER not found: apt-get install -y ripser, or set RIPSER" >&2; exit 2; }
"$PYTHON" -c 'import numpy' 2>/dev/null || { echo "error: $PYTHON lacks numpy: apt-get install -y python3-numpy" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$PYTHON" - "$BENCH" "$RIPSER" "$work" "$repeats" "$gudhi_max" "$sizes" > "$work/table.md" <<'EOF'
import json, re, statistics, subprocess, sys, time
import numpy as np

bench, ripser, work, repeats, gudhi_max, sizes = sys.argv[1:7]
repeats, gudhi_max = int(repeats), int(gudhi_max)


def wall(command):
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed:\n{result.stderr}")
    return seconds, result.stdout


def ripser_h1(text):
    body = text.split("persistence intervals in dim 1:")[1]
    return [(float(b), float(d) if d.strip() else float("inf")) for b, d in re.findall(r"\[([^,]+),([^)]*)\)", body)]


def agree(ours, theirs, tolerance):
    long_ours = [p for p in ours if p[1] - p[0] > tolerance]
    long_theirs = [p for p in theirs if p[1] - p[0] > tolerance]
    used = [False] * len(long_theirs)
    for b, d in long_ours:
        for k, (b2, d2) in enumerate(long_theirs):
            if not used[k] and abs(b - b2) <= tolerance and (d == d2 or abs(d - d2) <= tolerance):
                used[k] = True
                break
        else:
            return False
    return all(used)


def gudhi_seconds(distances):
    import gudhi
    start = time.perf_counter()
    enclosing = distances.max(axis=1).min()
    tree = gudhi.RipsComplex(distance_matrix=distances, max_edge_length=enclosing).create_simplex_tree(max_dimension=2)
    tree.compute_persistence(homology_coeff_field=2, min_persistence=0)
    pairs = tree.persistence_intervals_in_dimension(1)
    return time.perf_counter() - start, [(b, d) for b, d in pairs if d > b]


rows = []
for size in sizes.split():
    n, dim = map(int, size.split("x"))
    x = np.random.default_rng(0).standard_normal((n, dim))
    distances = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    matrix = f"{work}/matrix_{size}.txt"
    with open(matrix, "w") as f:
        for i in range(1, n):
            f.write(",".join(f"{v:.17g}" for v in distances[i, :i]) + "\n")
    ours, full, load = [], [], []
    for r in range(repeats):
        _, text = wall([bench, matrix, "--repeats", "1", "--diagram", f"{work}/ours_{size}.txt"])
        ours.append(json.loads(text)["median_s"])
        seconds, ripser_text = wall([ripser, "--format", "lower-distance", "--dim", "1", matrix])
        full.append(seconds)
        load.append(wall([ripser, "--format", "lower-distance", "--dim", "1", "--threshold", "0", matrix])[0])
    with open(f"{work}/ours_{size}.txt") as f:
        our_pairs = [tuple(float(v) for v in line.split()) for line in f]
    tolerance = 2e-5 * distances.max()
    same = agree(our_pairs, ripser_h1(ripser_text), tolerance)
    gudhi = "-"
    if n <= gudhi_max:
        try:
            seconds, gudhi_pairs = gudhi_seconds(distances)
            gudhi = f"{seconds:.3f}" + ("" if agree(our_pairs, gudhi_pairs, 1e-9 * distances.max()) else " (DIFFERS)")
        except ImportError:
            gudhi = "n/a"
    o, f_, l = statistics.median(ours), statistics.median(full), statistics.median(load)
    rows.append(f"| {n} | {dim} | {len(our_pairs)} | {o:.4f} | {f_:.4f} | {l:.4f} | {f_ - l:.4f} | "
                f"{o / (f_ - l):.2f} | {o / f_:.2f} | {gudhi} | {'yes' if same else 'NO'} |")
    print(f"{size}: ours {o:.4f} s, ripser {f_:.4f} - {l:.4f} s", file=sys.stderr)

print(f"H1 of Vietoris-Rips, Gaussian clouds, medians of {repeats} alternating runs (seconds)\n")
print("| points | dim | H1 bars | ours | ripser process | ripser start+read | ripser compute | "
      "ours/ripser | ours/ripser process | GUDHI python | diagrams agree |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
print("\n".join(rows))
EOF
cat "$work/table.md"
[[ -z "$out" ]] || cp "$work/table.md" "$out"
grep -q "| NO |\|DIFFERS" "$work/table.md" && { echo "error: diagrams differ" >&2; exit 1; }
exit 0
