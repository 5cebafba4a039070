#include "ffnshape/geometry/gromov.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "optimal_transport.h"

namespace ffnshape::geometry {
namespace {

using torch::Tensor;

std::string shape_of(const Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

Tensor checked_distances(const Tensor& d, const char* what) {
  if (d.dim() != 2 || d.size(0) != d.size(1)) {
    throw std::invalid_argument(std::string(what) + " must be a square (N, N) distance matrix, but has shape " +
                                shape_of(d));
  }
  if (d.size(0) < 2) {
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(d.size(0)) +
                                " point; Gromov-Wasserstein needs at least 2");
  }
  const auto x = d.to(torch::kCPU, torch::kDouble).contiguous();
  if (!torch::isfinite(x).all().item<bool>()) {
    throw std::invalid_argument(std::string(what) + " contains NaN or infinite values");
  }
  const double scale = x.abs().max().item<double>();
  const double asymmetry = (x - x.t()).abs().max().item<double>();
  if (asymmetry > 1e-9 * scale) {
    throw std::invalid_argument(std::string(what) + " is not symmetric: |D - D^T| reaches " + std::to_string(asymmetry) +
                                " (largest entry " + std::to_string(scale) + "); pass a distance matrix");
  }
  return 0.5 * (x + x.t());  // removes rounding-level asymmetry; exact for a symmetric matrix
}

// The pieces of the square loss (Peyre, Cuturi, Solomon 2016, Prop. 1; POT's init_matrix):
// sum_kl (C1_ik - C2_jl)^2 T_kl = constC_ij - 2 (C1 T C2)_ij for couplings T of p and q, with
// constC = (C1^2 p) 1^T + 1 (C2^2 q)^T. The loss is <constC - 2 C1 T C2, T>, its gradient 2 (constC - 2 C1 T C2).
struct SquareLoss {
  Tensor c1, c2, const_c;
  SquareLoss(Tensor a, Tensor b) : c1(std::move(a)), c2(std::move(b)) {
    const auto p = torch::full({c1.size(0)}, 1.0 / static_cast<double>(c1.size(0)), torch::kDouble);
    const auto q = torch::full({c2.size(0)}, 1.0 / static_cast<double>(c2.size(0)), torch::kDouble);
    const_c = c1.pow(2).mv(p).unsqueeze(1) + c2.pow(2).mv(q).unsqueeze(0);
  }
  Tensor product(const Tensor& t) const { return c1.mm(t).mm(c2); }  // C1 T C2
  double loss(const Tensor& t, const Tensor& c1tc2) const { return ((const_c - 2.0 * c1tc2) * t).sum().item<double>(); }
  Tensor independent() const {
    return torch::full({c1.size(0), c2.size(0)}, 1.0 / static_cast<double>(c1.size(0) * c2.size(0)), torch::kDouble);
  }
};

double frobenius_inner(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }

std::vector<double> row_sums(const Tensor& c) {
  const auto sums = c.sum(1).contiguous();
  return std::vector<double>(sums.data_ptr<double>(), sums.data_ptr<double>() + sums.numel());
}

// argmin over [0, 1] of a x^2 + b x + c (POT's solve_1d_linesearch_quad).
double quadratic_step(double a, double b, double c) {
  if (a > 0) return std::min(1.0, std::max(0.0, -b / (2.0 * a)));
  return c > a + b + c ? 1.0 : 0.0;
}

// Conditional gradient as POT's ot.optim.cg called by gromov_wasserstein2 (armijo=False); `tie_seed`
// chooses among the optimal first vertices when the row sums tie (0: index order).
double solve_conditional_gradient(const SquareLoss& sq, int max_iter, double tolerance, uint64_t tie_seed) {
  const int64_t n = sq.c1.size(0), m = sq.c2.size(0);
  Tensor g = sq.independent();
  Tensor a = sq.product(g);  // C1 G C2, carried along the line searches
  double f = sq.loss(g, a);
  detail::TransportBasis basis;
  for (int it = 1;; ++it) {
    const Tensor gradient = (2.0 * (sq.const_c - 2.0 * a)).contiguous();
    // The linearised problem: an exact optimal vertex (POT adds a constant to the cost; no effect on the plan).
    // At the independent coupling C1 G C2 = r s^T / (N M) with r, s the row sums of C1, C2, so the cost is
    // a_i + b_j - 4 r_i s_j / (N M), whose optimum is the comonotone coupling of r and s: sorting replaces
    // the general solver, for which this nearly degenerate cost is the hardest of the run.
    // Later steps: shortest augmenting paths for N == M (an assignment problem); for N != M the transport
    // simplex, warm-started from the previous step's optimal basis.
    const auto plan = it == 1  ? detail::comonotone_transport(row_sums(sq.c1), row_sums(sq.c2), &basis, tie_seed)
                      : n == m ? detail::uniform_transport(gradient.data_ptr<double>(), n, m)
                               : detail::uniform_transport_simplex(gradient.data_ptr<double>(), n, m, basis);
    const Tensor vertex = torch::from_blob(const_cast<double*>(plan.mass.data()), {n, m}, torch::kDouble);
    const Tensor direction = vertex - g;
    const Tensor b = sq.product(direction);
    // Exact line search: loss(G + x dG) = qa x^2 + qb x + f (POT's solve_linesearch, reg = 1, M = 0).
    const double qa = -2.0 * frobenius_inner(b, direction);
    const double qb = frobenius_inner(sq.const_c, direction) - 2.0 * (frobenius_inner(b, g) + frobenius_inner(a, direction));
    const double step = quadratic_step(qa, qb, f);
    g = g + step * direction;
    a = a + step * b;
    const double previous = f;
    f = sq.loss(g, a);
    if (it >= max_iter) break;
    const double change = std::abs(f - previous);
    if (change / std::abs(f) < tolerance || change < tolerance) break;
  }
  return sq.loss(g, sq.product(g));
}

// True when tied row sums of `c` belong to points that are not copies of one another (rows that differ):
// then the first step's optimal vertices are not all equivalent. Ties among copies change nothing, since
// exchanging two copies is an isometry.
bool has_distinct_ties(const Tensor& c) {
  const auto sums = row_sums(c);
  const auto order = detail::decreasing_order(sums);
  for (const auto& [begin, end] : detail::tie_groups(sums, order)) {
    const auto first = c[order[begin]];
    for (size_t k = begin + 1; k < end; ++k) {
      if (!torch::equal(c[order[k]], first)) return true;
    }
  }
  return false;
}

// The lowest value over the first-step tie-breaks: index order, then tie_starts - 1 seeded shuffles.
double solve_conditional_gradient_over_ties(const SquareLoss& sq, int max_iter, double tolerance, int tie_starts) {
  double best = solve_conditional_gradient(sq, max_iter, tolerance, 0);
  if (tie_starts <= 1 || !(has_distinct_ties(sq.c1) || has_distinct_ties(sq.c2))) return best;
  for (int start = 1; start < tie_starts; ++start) {
    best = std::min(best, solve_conditional_gradient(sq, max_iter, tolerance, static_cast<uint64_t>(start)));
  }
  return best;
}

// POT's sinkhorn_knopp with its defaults (1000 iterations, marginal error 1e-9 checked every 10th).
Tensor sinkhorn(const Tensor& cost, double epsilon) {
  constexpr int iterations = 1000;
  constexpr double threshold = 1e-9;
  const int64_t n = cost.size(0), m = cost.size(1);
  const auto b = torch::full({m}, 1.0 / static_cast<double>(m), torch::kDouble);
  Tensor u = torch::full({n}, 1.0 / static_cast<double>(n), torch::kDouble);
  Tensor v = torch::full({m}, 1.0 / static_cast<double>(m), torch::kDouble);
  const Tensor k = torch::exp(cost / -epsilon);
  const Tensor kt = k.t();  // a view: BLAS reads K transposed, as numpy does for K.T
  const Tensor kp = static_cast<double>(n) * k;
  auto usable = [](const Tensor& t, bool nonzero) {
    const double* x = t.data_ptr<double>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (!std::isfinite(x[i]) || (nonzero && x[i] == 0)) return false;
    }
    return true;
  };
  for (int ii = 0; ii < iterations; ++ii) {
    const Tensor ktu = kt.mv(u);
    v = b / ktu;
    u = 1.0 / kp.mv(v);
    if (!usable(ktu, true) || !usable(u, false) || !usable(v, false)) {
      const double range = cost.abs().max().item<double>();
      throw std::invalid_argument(
          "entropic Gromov-Wasserstein: Sinkhorn scaling under- or overflowed: epsilon " + std::to_string(epsilon) +
          " is too small for gradients up to " + std::to_string(range) + " (exp(-gradient / epsilon) leaves double " +
          "range); use epsilon >= about " + std::to_string(range / 600.0) +
          ", scale the distances to a maximum of about 1, or use the cg solver");
    }
    if (ii % 10 == 0) {
      const double err = (v * kt.mv(u) - b).norm().item<double>();
      if (err < threshold) break;
    }
  }
  return u.unsqueeze(1) * k * v.unsqueeze(0);
}

// POT's entropic_gromov_wasserstein: projected gradient steps T <- sinkhorn(grad(T), epsilon).
double solve_entropic(const SquareLoss& sq, double epsilon, int max_iter, double tolerance) {
  Tensor t = sq.independent();
  double err = 1;
  for (int it = 0; err > tolerance && it < max_iter; ++it) {
    const Tensor previous = t;
    t = sinkhorn(2.0 * (sq.const_c - 2.0 * sq.product(t)), epsilon);
    if (it % 10 == 0) err = (t - previous).norm().item<double>();
  }
  return sq.loss(t, sq.product(t));
}

}  // namespace

GwSolver parse_gw_solver(const std::string& name) {
  if (name == "cg") return GwSolver::conditional_gradient;
  if (name == "entropic") return GwSolver::entropic;
  throw std::invalid_argument("unknown Gromov-Wasserstein solver '" + name + "': use cg or entropic");
}

const char* to_string(GwSolver solver) { return solver == GwSolver::conditional_gradient ? "cg" : "entropic"; }

double gromov_wasserstein(const torch::Tensor& dx, const torch::Tensor& dy, const GwOptions& options) {
  torch::NoGradGuard no_grad;
  if (options.tie_starts < 1) {
    throw std::invalid_argument("Gromov-Wasserstein tie_starts must be >= 1, but is " + std::to_string(options.tie_starts));
  }
  if (options.max_iter < 0) {
    throw std::invalid_argument("Gromov-Wasserstein max_iter must be >= 0 (0: the solver's default), but is " +
                                std::to_string(options.max_iter));
  }
  if (!(options.tolerance >= 0) || !std::isfinite(options.tolerance)) {
    throw std::invalid_argument("Gromov-Wasserstein tolerance must be a finite number >= 0, but is " +
                                std::to_string(options.tolerance));
  }
  const bool entropic = options.solver == GwSolver::entropic;
  if (entropic && !(options.epsilon > 0 && std::isfinite(options.epsilon))) {
    throw std::invalid_argument("entropic Gromov-Wasserstein needs epsilon > 0, but it is " +
                                std::to_string(options.epsilon));
  }
  auto c1 = checked_distances(dx, "the first distance matrix"), c2 = checked_distances(dy, "the second distance matrix");
  if (entropic) {
    return solve_entropic(SquareLoss(c1, c2), options.epsilon, options.max_iter > 0 ? options.max_iter : 1000,
                          options.tolerance);
  }
  // GW is homogeneous of degree 2: solving at unit scale gives the absolute stopping threshold the same
  // meaning at every scale (far below 1 it would stop after one step).
  const double scale = std::max(c1.abs().max().item<double>(), c2.abs().max().item<double>());
  if (scale == 0) return 0.0;
  const SquareLoss sq(c1 / scale, c2 / scale);
  // The loss is a sum of squares; a rounding-level negative value (isometric clouds) is reported as 0.
  const double value = solve_conditional_gradient_over_ties(sq, options.max_iter > 0 ? options.max_iter : 200,
                                                            options.tolerance, options.tie_starts);
  return scale * scale * std::max(0.0, value);
}

}  // namespace ffnshape::geometry
