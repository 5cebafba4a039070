// Gromov-Wasserstein discrepancy between two point clouds given by their distance matrices: how far the
// two metric spaces are from being isometric, whatever the correspondence of their points. Clouds of
// different layers have no shared coordinates, so comparing them needs a correspondence-free measure.
//
// Square loss, uniform weights p = 1/N, q = 1/M:
//   GW(DX, DY) = min_T sum_{ijkl} (DX_ik - DY_jl)^2 T_ij T_kl   over couplings T of p and q.
// The problem is a non-convex quadratic program; both solvers return a local optimum, the value
// ot.gromov.gromov_wasserstein2 / entropic_gromov_wasserstein2 of POT 0.8.2 return for the same input
// (the reference checks in tests/ hold them together):
//
//   cg        conditional gradient (Frank-Wolfe) from the independent coupling p q^T, each linearised step
//             solved exactly (an optimal vertex of the transport polytope: by sorting at the first step,
//             then shortest augmenting paths for N == M, a warm-started transport simplex for N != M) and
//             followed by the exact line search of the quadratic; stops when the loss changes by less than `tolerance` in relative or
//             absolute terms, or after max_iter steps (POT: 200, 1e-9). Its coupling is sparse, its value
//             is the plain GW loss. The default and the fast one. It works on both matrices divided by
//             their largest entry and scales the value back (GW is homogeneous of degree 2), so the
//             absolute threshold means the same at every scale; at unit scale that is POT's computation.
//
//             Ties: when distinct points of a cloud have equal distance sums (grids, regular polygons,
//             cubes: clouds with symmetries), the first linearised step has several optimal vertices,
//             and which one is taken decides the local optimum reached; POT's network simplex takes one
//             (so "POT's value" is one of several local optima), ours another. The cg value is then the
//             lowest over `tie_starts` tie-breaks (index order first, then seeded shuffles of each tied
//             group): at or below POT's value on the symmetric clouds of the tests. Ties among exact
//             copies (repeated points) change nothing and cost no extra starts.
//   entropic  projected gradient with Sinkhorn projections (Peyre, Cuturi, Solomon 2016): each step is the
//             entropic transport plan for the current gradient at regularisation epsilon (Sinkhorn scaling,
//             1000 iterations, marginal error 1e-9, as POT). Stops when the plan moves by less than
//             `tolerance` (Frobenius norm, checked every 10th step) or after max_iter steps (POT: 1000,
//             1e-9). The value is the GW loss of the blurred plan, so it is >= the cg value for small
//             epsilon and grows with epsilon.
//
// epsilon is absolute, in the units of the squared distances. Sinkhorn scaling (POT's default method,
// kept here so the values agree) evaluates exp(-gradient / epsilon); the gradient lies within
// [-4 D^2, 4 D^2] for distances up to D, so an epsilon below about D^2 / 180 can leave the double range.
// POT then warns and returns the last usable, unconverged plan; this implementation throws
// std::invalid_argument naming the epsilon it needs. The default 5e-3 suits distance matrices scaled to a
// maximum of about 1 (divide by the largest distance); for raw distances use epsilon >= D^2 / 180.
//
// Input: symmetric (N, N) and (M, M) matrices, N, M >= 2, any floating dtype; work is in float64 on the
// CPU. A matrix that is not square, not symmetric (beyond rounding: 1e-9 of its largest entry), too small
// or not finite, and an epsilon <= 0, throw std::invalid_argument saying what is wrong.
#pragma once

#include <torch/torch.h>

#include <string>

namespace ffnshape::geometry {

enum class GwSolver { conditional_gradient, entropic };

GwSolver parse_gw_solver(const std::string& name);  // "cg" | "entropic"; throws std::invalid_argument otherwise
const char* to_string(GwSolver solver);              // "cg" | "entropic"

struct GwOptions {
  GwSolver solver = GwSolver::conditional_gradient;
  double epsilon = 5e-3;    // entropic only: regularisation, absolute (squared-distance units); see above
  int max_iter = 0;         // outer iterations; 0 = POT's default for the solver: 200 (cg), 1000 (entropic)
  double tolerance = 1e-9;  // POT's default for both: cg relative/absolute loss change, entropic plan change
  int tie_starts = 16;      // cg only: first-step tie-breaks tried when distinct points tie (see above); 1 = one
};

// Gromov-Wasserstein discrepancy between (N, N) and (M, M) symmetric distance matrices with uniform weights
// and square loss: min_T sum_{ijkl} (DX_ik - DY_jl)^2 T_ij T_kl over couplings T of the uniform marginals,
// the value POT's ot.gromov.gromov_wasserstein2 (cg) / entropic_gromov_wasserstein2 (entropic) return.
double gromov_wasserstein(const torch::Tensor& dx, const torch::Tensor& dy, const GwOptions& options = {});

}  // namespace ffnshape::geometry
