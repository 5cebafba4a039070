// Exact optimal transport between uniform marginals (internal to the geometry area).
//
// The linear step of the conditional-gradient Gromov-Wasserstein solver: minimise <C, T> over couplings T
// of the uniform weights 1/n (rows) and 1/m (columns). Scaling the weights by n m / gcd(n, m) makes every
// row supply m / g and every column demand n / g units, all integers, so the problem is an integral
// transportation problem and successive shortest paths solve it exactly: Dijkstra on reduced costs in the
// dense bipartite residual graph, with node potentials that keep reduced costs non-negative (the dual).
// With n == m every supply and demand is 1 and this is the shortest-augmenting-path (Jonker-Volgenant style)
// linear-assignment method, O(n^3) at worst; the optimum is then a permutation matrix.
//
// For n != m, uniform_transport_simplex (below) is faster: shortest paths then split the flow into many
// small pieces when n and m share few factors, while the simplex moves whole basic flows and can start
// from the previous optimum.
//
// Ties: when several vertices are optimal, which one is returned depends on the visiting order, so it can
// differ from the vertex a network simplex (POT's ot.emd) returns; the linear cost is the same.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ffnshape::geometry::detail {

struct TransportPlan {
  int64_t rows = 0, cols = 0;
  std::vector<double> mass;  // rows x cols, row-major; every row sums to 1/rows, every column to 1/cols
  double cost = 0;           // <C, T>
};

// cost: rows x cols, row-major, finite. Throws std::invalid_argument on empty or non-finite input.
TransportPlan uniform_transport(const double* cost, int64_t rows, int64_t cols);

// A basic feasible solution of the uniform transport problem: n + m - 1 cells forming a spanning tree of
// the bipartite row-column graph, with integral flows in the units above (some may be 0: degenerate).
struct TransportBasis {
  std::vector<int64_t> row, col, flow;
};

// The optimum for costs of the form a_i + b_j - x_i y_j (any a, b): the comonotone coupling, which pairs
// the rows in decreasing order of x with the columns in decreasing order of y (north-west corner rule on
// the sorted orders; optimal for every submodular cost, rearrangement inequality). O(n log n + m log m).
// cost is not returned (0). When basis is given, it receives the coupling as a basic solution.
// Ties (values within rounding of each other, see tie_groups) leave several optimal couplings: tie_seed 0
// keeps tied entries in index order; another seed shuffles each tied group with that seed.
TransportPlan comonotone_transport(const std::vector<double>& x, const std::vector<double>& y,
                                   TransportBasis* basis = nullptr, uint64_t tie_seed = 0);

// `values` in decreasing order (ties in index order, or shuffled by tie_seed != 0).
std::vector<int64_t> decreasing_order(const std::vector<double>& values, uint64_t tie_seed = 0);

// The runs of `order` (a decreasing order of values) whose values are equal to within 1e-12 of the largest
// magnitude: [begin, end) positions in `order`, only runs of two or more.
std::vector<std::pair<size_t, size_t>> tie_groups(const std::vector<double>& values, const std::vector<int64_t>& order);

// The same optimum as uniform_transport by the transportation (network) simplex method, as POT's ot.emd:
// potentials from the spanning tree, block-search pricing, pivots along the tree cycle. Starts from
// `basis` when it holds one (a warm start: the previous optimum stays feasible when only the costs
// change, as between conditional-gradient steps), else from the north-west corner; leaves the optimal
// basis there. Degenerate pivots could in principle cycle: past a generous pivot limit the solve is handed
// to uniform_transport. The faster method when n != m (shortest paths then split flows into many pieces).
TransportPlan uniform_transport_simplex(const double* cost, int64_t rows, int64_t cols, TransportBasis& basis);

}  // namespace ffnshape::geometry::detail
