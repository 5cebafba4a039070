// Degree-1 persistent homology of Vietoris-Rips filtrations and Wasserstein distances between
// persistence diagrams: the loops of a point cloud, from the scale where each appears to the scale where
// it is filled in, and a metric to compare those barcodes across layers.
//
// rips_h1 follows Ripser (Bauer 2021): persistent cohomology over Z/2 with edges and triangles named by
// the combinatorial number system, coboundaries enumerated on the fly (the coboundary matrix is never
// built), clearing of the edges that merge components, and the apparent and emergent pair shortcuts.
// It is exact: the diagram equals Ripser's and GUDHI's, computed in float64 (Ripser uses float32).
//
// Memory: 8 N^2 bytes for the float64 copy of the matrix and 4 bytes per edge (2 N^2 bytes) to start,
// then what the reduction grows: 16 bytes per stored entry of its V columns and of the working
// coboundary, and about 60 bytes per reduced column. On low-dimensional clouds (and typical
// activations) that growth is small, but it has no useful bound: on high-dimensional noise under the
// full filtration it is the bulk (a 1000-point 64-D Gaussian cloud under spherical distances took more
// than 7 GB and 20 minutes before it was stopped). Hence a budget: the computation stops with
// PersistenceBudgetExceeded when it holds more memory or has run longer than allowed.
//
// diagram_distance wraps Hera's auction (Kerber, Morozov, Nigmetov 2017), the solver GUDHI also uses.
#pragma once

#include <torch/torch.h>

#include <limits>
#include <stdexcept>
#include <vector>

namespace ffnshape::geometry {

struct PersistencePair {
  double birth;
  double death;  // +infinity for a class that never dies (only possible below the enclosing radius)
};
using PersistenceDiagram = std::vector<PersistencePair>;

// Limits on one rips_h1 call; 0 = no limit. Checked about every million elementary steps, so the
// computation stops a fraction of a second past a limit (memory: at most one doubling of a growing buffer
// past it).
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

struct PersistenceBudget {
  double memory_bytes = 2.0 * kBytesPerGiB;
  double seconds = 300;
};

// Thrown by rips_h1 when it would exceed its budget; the message says how far it got and what to change.
class PersistenceBudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Degree-1 persistence diagram of the Vietoris-Rips filtration of a symmetric (N, N) distance matrix
// (any floating dtype, computed in float64). Edges longer than `threshold` are left out of the
// filtration, so classes still alive there get death = +infinity. Above the enclosing radius
// (min_i max_j d_ij) every Rips complex is a cone, so the computation stops there at no loss.
// Pairs with death == birth (zero persistence) are dropped; the result is sorted by (birth, death).
// Throws std::invalid_argument for a matrix that is not square, not symmetric (relative tolerance 1e-9;
// the two triangles are averaged), has non-finite or negative entries or a nonzero diagonal, or for a
// NaN or negative threshold or budget. Fewer than 3 points have no loops: the diagram is empty.
// Throws PersistenceBudgetExceeded past `budget`.
PersistenceDiagram rips_h1(const torch::Tensor& distances,
                           double threshold = std::numeric_limits<double>::infinity(),
                           const PersistenceBudget& budget = {});

// q-Wasserstein distance between two persistence diagrams: the minimum over matchings, where a point may
// also go to the diagonal, of (sum of ground costs^q)^(1/q). The ground metric is the L-`internal_p` norm
// of the plane: L-infinity by default (Hera's and GUDHI's default), where a point (b, d) is (d - b) / 2
// from the diagonal; with internal_p = 2 (L2) it is (d - b) / sqrt 2 away, and matched points cost their
// Euclidean distance, so L2 values are up to sqrt 2 times the L-infinity ones. Computed by Hera's
// auction to a relative error of 1e-10, far below the 1e-6 agreement the tests demand of the exact
// solver (GUDHI with POT). Points with death = +infinity are matched among themselves by birth, as Hera
// and GUDHI do: the distance is +infinity when the two diagrams have different numbers of them.
// Throws std::invalid_argument for q < 1 or non-finite q, internal_p < 1 or NaN, NaN or infinite births,
// or death < birth.
double diagram_distance(const PersistenceDiagram& a, const PersistenceDiagram& b, double q = 2.0,
                        double internal_p = std::numeric_limits<double>::infinity());

}  // namespace ffnshape::geometry
