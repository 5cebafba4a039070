"""Reference values for tests/test_geometry_references.cpp, computed independently of ffnshape in float64.

    python3 geometry_reference.py DIR

DIR/cases.json lists cases {name, geometry, radius, n, dim}; DIR/NAME_x.bin and DIR/NAME_y.bin hold two
clouds of corresponding points (n x dim float64, row-major, little-endian). For each case this writes
DIR/NAME_dx.bin and DIR/NAME_dy.bin (the numpy distance matrices) and, into DIR/results.json: the shift,
the H1 diagrams of both clouds (GUDHI's Rips complex on the numpy distances), their 2-Wasserstein
distances under the L-infinity and L2 ground metrics (GUDHI's Hera, relative error 1e-10) and the
Gromov-Wasserstein value (POT, conditional gradient, computed at unit scale and scaled back: GW is
homogeneous of degree 2). POT's exact transport loses accuracy on costs far below 1, so it serves neither
here nor for the diagram distance (GUDHI's POT-based one is 2.5 times too large on diagrams scaled by
1e-7; tests/fixtures/diagram_distances.txt holds ours to it at unit scale).

Distances follow the definitions in include/ffnshape/geometry/metrics.h, in forms accurate at tiny and
near-antipodal angles: raw |x - y|; spherical 2 arctan2(|u - v|, |u + v|); hyperbolic arcosh(1 + z) with
z = 2 |p - q|^2 / (1 - r^2)^2 for p = r u, evaluated as log1p(z + sqrt(z (z + 2))).
"""
import json
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
import gudhi  # noqa: E402
import gudhi.hera  # noqa: E402
import ot  # noqa: E402


def norms(diff):
    return np.sqrt((diff**2).sum(-1))


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def between(a, b, geometry, radius, pairwise):
    """Distances between the rows of a and b: all pairs, or corresponding rows."""
    if geometry != "raw":
        a, b = unit(a), unit(b)
    ea, eb = (a[:, None, :], b[None, :, :]) if pairwise else (a, b)
    minus = norms(ea - eb)
    if geometry == "raw":
        return minus
    if geometry == "spherical":
        return 2 * np.arctan2(minus, norms(ea + eb))
    z = 2 * (radius * minus) ** 2 / (1 - radius**2) ** 2
    return np.log1p(z + np.sqrt(z * (z + 2)))


def h1(d):
    enclosing = d.max(axis=1).min()  # above it every Rips complex is a cone: no bar changes
    tree = gudhi.RipsComplex(distance_matrix=d, max_edge_length=enclosing).create_simplex_tree(max_dimension=2)
    tree.persistence(homology_coeff_field=2)
    bars = tree.persistence_intervals_in_dimension(1)
    return sorted((float(b), float(e)) for b, e in bars if e > b)


def main(folder):
    cases = json.load(open(f"{folder}/cases.json"))
    results = {}
    for c in cases:
        name, geometry, radius = c["name"], c["geometry"], c["radius"]
        x, y = (np.fromfile(f"{folder}/{name}_{s}.bin", dtype="<f8").reshape(c["n"], c["dim"]) for s in "xy")
        dx, dy = between(x, x, geometry, radius, True), between(y, y, geometry, radius, True)
        dx.astype("<f8").tofile(f"{folder}/{name}_dx.bin")
        dy.astype("<f8").tofile(f"{folder}/{name}_dy.bin")
        hx, hy = h1(dx), h1(dy)
        ax, ay = np.array(hx).reshape(-1, 2), np.array(hy).reshape(-1, 2)
        scale = max(dx.max(), dy.max())
        p, q = ot.unif(len(dx)), ot.unif(len(dy))
        results[name] = {
            "shift": float(between(x, y, geometry, radius, False).mean()),
            "h1_x": hx,
            "h1_y": hy,
            "topo_linf": float(gudhi.hera.wasserstein_distance(ax, ay, order=2, internal_p=np.inf, delta=1e-10)),
            "topo_l2": float(gudhi.hera.wasserstein_distance(ax, ay, order=2, internal_p=2, delta=1e-10)),
            "gw": scale**2 * float(ot.gromov.gromov_wasserstein2(dx / scale, dy / scale, p, q, "square_loss")),
        }
    json.dump(results, open(f"{folder}/results.json", "w"))


if __name__ == "__main__":
    main(sys.argv[1])
