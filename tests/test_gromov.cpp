// Gromov-Wasserstein: agreement with POT 0.8.2 (stored fixtures and, where Debian's python3-pot is
// installed, fresh random data), the exact transport step against brute force, invariances (isometries,
// permutations, swapping the arguments), a case computed by hand, and bad input.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../src/geometry/optimal_transport.h"
#include "ffnshape/geometry/gromov.h"
#include "ffnshape/geometry/metrics.h"
#include "temp_dir.h"

using namespace ffnshape::geometry;

namespace {

torch::Tensor from_json(const nlohmann::json& rows) {
  const auto n = static_cast<int64_t>(rows.size());
  auto t = torch::empty({n, n}, torch::kDouble);
  auto a = t.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) a[i][j] = rows[i][j].get<double>();
  }
  return t;
}

double relative_error(double value, double reference) {
  return std::abs(value - reference) / std::max(std::abs(reference), 1e-300);
}

// Distances of a random Gaussian cloud, divided by the largest one.
torch::Tensor random_distances(int64_t n, int64_t dim) {
  const auto d = pairwise_distances(torch::randn({n, dim}, torch::kDouble));
  return d / d.max();
}

GwOptions entropic(double epsilon) {
  GwOptions o;
  o.solver = GwSolver::entropic;
  o.epsilon = epsilon;
  return o;
}

void write_matrix(const std::string& path, const torch::Tensor& d) {
  std::ofstream out(path);
  out.precision(17);
  auto a = d.accessor<double, 2>();
  for (int64_t i = 0; i < d.size(0); ++i) {
    for (int64_t j = 0; j < d.size(1); ++j) out << (j ? " " : "") << a[i][j];
    out << "\n";
  }
}

std::string run_and_capture(const std::string& command) {
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    while (size_t got = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, got);
    if (pclose(pipe) != 0) return "";
  }
  return output;
}

bool have_pot() { return std::system("/usr/bin/python3 -c 'import ot' > /dev/null 2>&1") == 0; }

// POT's cg and entropic values for two distance matrices, computed in a fresh python3 (entropic only for
// epsilon > 0, else NaN).
std::pair<double, double> pot_values(const ffnshape::testing::TempDir& dir, const torch::Tensor& dx,
                                     const torch::Tensor& dy, double epsilon) {
  const std::string script = dir.file("pot_gw.py");
  std::ofstream(script) << "import sys, warnings, numpy as np, ot\n"
                           "warnings.simplefilter('ignore')\n"
                           "dx, dy = np.loadtxt(sys.argv[1], ndmin=2), np.loadtxt(sys.argv[2], ndmin=2)\n"
                           "p, q = ot.unif(len(dx)), ot.unif(len(dy))\n"
                           "print(repr(float(ot.gromov.gromov_wasserstein2(dx, dy, p, q, 'square_loss'))))\n"
                           "if float(sys.argv[3]) > 0:\n"
                           "    print(repr(float(ot.gromov.entropic_gromov_wasserstein2(dx, dy, p, q, 'square_loss',"
                           " float(sys.argv[3])))))\n";
  write_matrix(dir.file("dx.txt"), dx);
  write_matrix(dir.file("dy.txt"), dy);
  std::istringstream values(run_and_capture("/usr/bin/python3 " + script + " " + dir.file("dx.txt") + " " +
                                            dir.file("dy.txt") + " " + std::to_string(epsilon)));
  double cg = NAN, ent = NAN;
  values >> cg >> ent;
  return {cg, ent};
}

// Points of a k x k grid, a regular polygon of n corners and radius r, a k x k x k cube (unit spacing).
torch::Tensor grid(int64_t k) {
  auto x = torch::empty({k * k, 2}, torch::kDouble);
  for (int64_t i = 0; i < k * k; ++i) x[i][0] = static_cast<double>(i % k), x[i][1] = static_cast<double>(i / k);
  return x;
}
torch::Tensor polygon(int64_t n, double r) {
  auto x = torch::empty({n, 2}, torch::kDouble);
  for (int64_t i = 0; i < n; ++i) x[i][0] = r * std::cos(2 * M_PI * i / n), x[i][1] = r * std::sin(2 * M_PI * i / n);
  return x;
}
torch::Tensor cube(int64_t k) {
  auto x = torch::empty({k * k * k, 3}, torch::kDouble);
  for (int64_t i = 0; i < k * k * k; ++i) {
    x[i][0] = static_cast<double>(i % k), x[i][1] = static_cast<double>(i / k % k), x[i][2] = static_cast<double>(i / (k * k));
  }
  return x;
}

}  // namespace

TEST(GromovFixtures, AgreeWithPot) {
  std::ifstream in(std::string(FFNSHAPE_SOURCE_DIR) + "/tests/fixtures/gw_cases.json");
  ASSERT_TRUE(in) << "missing tests/fixtures/gw_cases.json (make it with tests/fixtures/make_gw_fixtures.py)";
  const auto fixtures = nlohmann::json::parse(in);
  ASSERT_GE(fixtures["cases"].size(), 6u);
  for (const auto& c : fixtures["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto dx = from_json(c["dx"]), dy = from_json(c["dy"]);
    EXPECT_LT(relative_error(gromov_wasserstein(dx, dy), c["cg"].get<double>()), 1e-4);
    EXPECT_LT(relative_error(gromov_wasserstein(dx, dy, entropic(c["epsilon"].get<double>())), c["entropic"].get<double>()),
              1e-4);
  }
}

TEST(Gromov, AgreesWithPotOnFreshData) {
  if (!have_pot()) GTEST_SKIP() << "/usr/bin/python3 cannot import ot (apt-get install python3-pot)";
  ffnshape::testing::TempDir dir("ffnshape_gw");
  torch::manual_seed(20240520);
  const double epsilon = 1e-2;
  for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{{35, 35}, {27, 41}, {60, 18}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(m));
    const auto dx = random_distances(n, 6), dy = 2.0 * random_distances(m, 3);
    const auto [pot_cg, pot_entropic] = pot_values(dir, dx, dy, epsilon);
    ASSERT_FALSE(std::isnan(pot_cg) || std::isnan(pot_entropic)) << "POT did not answer";
    EXPECT_LT(relative_error(gromov_wasserstein(dx, dy), pot_cg), 1e-4) << "POT cg " << pot_cg;
    EXPECT_LT(relative_error(gromov_wasserstein(dx, dy, entropic(epsilon)), pot_entropic), 1e-4)
        << "POT entropic " << pot_entropic;
  }
}

TEST(Gromov, SymmetricCloudsEndAtOrBelowPot) {
  // Grids, regular polygons and cubes have isometries, so distinct points tie in the first linearised
  // step and the local optimum reached depends on the tie-break (POT's network simplex makes one). The
  // value is the best over tie_starts tie-breaks: never above POT's, and its lower bound 0 is reached
  // against an isometric copy where POT stops higher (9 x 9 grid: POT 0.21).
  if (!have_pot()) GTEST_SKIP() << "/usr/bin/python3 cannot import ot (apt-get install python3-pot)";
  ffnshape::testing::TempDir dir("ffnshape_gw_symmetric");
  const auto d = [](const torch::Tensor& x) { return pairwise_distances(x); };
  torch::manual_seed(5);
  const auto shuffled = grid(9).index({torch::randperm(81)});
  const std::vector<std::tuple<std::string, torch::Tensor, torch::Tensor>> cases = {
      {"grid 9 vs itself", d(grid(9)), d(grid(9))},         {"grid 9 vs shuffled", d(grid(9)), d(shuffled)},
      {"grid 5 vs grid 6", d(grid(5)), d(grid(6))},         {"12-gon vs itself", d(polygon(12, 1)), d(polygon(12, 1))},
      {"10-gon vs 15-gon", d(polygon(10, 1)), d(polygon(15, 2))}, {"cube 3 vs itself", d(cube(3)), d(cube(3))},
      {"grid 4 vs cube 2", d(grid(4)), d(cube(2))},         {"cube 3 vs grid 5", d(cube(3)), d(grid(5))}};
  for (const auto& [name, dx, dy] : cases) {
    SCOPED_TRACE(name);
    const double pot = pot_values(dir, dx, dy, 0.0).first;
    ASSERT_FALSE(std::isnan(pot)) << "POT did not answer";
    const double ours = gromov_wasserstein(dx, dy);
    EXPECT_LE(ours, pot * (1 + 1e-9) + 1e-12) << "POT " << pot;
    EXPECT_GE(ours, -1e-12);
  }
}

TEST(Gromov, TransportStepIsExact) {
  torch::manual_seed(3);
  // Brute force over every integral plan: assignments (6 x 6) and splits of the columns among the rows.
  for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{{6, 6}, {2, 4}, {3, 6}, {1, 5}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(m));
    const auto cost = torch::rand({n, m}, torch::kDouble).contiguous();
    const auto plan = ffnshape::geometry::detail::uniform_transport(cost.data_ptr<double>(), n, m);
    const auto c = cost.accessor<double, 2>();
    // m is a multiple of n here: every row takes m / n whole columns. Enumerate column orders.
    std::vector<int64_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    double best = std::numeric_limits<double>::infinity();
    do {
      double total = 0;
      for (int64_t j = 0; j < m; ++j) total += c[j / (m / n)][order[j]] / static_cast<double>(m);
      best = std::min(best, total);
    } while (std::next_permutation(order.begin(), order.end()));
    EXPECT_NEAR(plan.cost, best, 1e-12);
  }
  // Costs a_i + b_j - x_i y_j: the comonotone coupling is optimal.
  for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{{9, 9}, {8, 13}, {15, 6}}) {
    const auto a = torch::randn({n, 1}, torch::kDouble), b = torch::randn({1, m}, torch::kDouble);
    const auto x = torch::randn({n}, torch::kDouble), y = torch::randn({m}, torch::kDouble);
    const auto cost = (a + b - x.unsqueeze(1) * y.unsqueeze(0)).contiguous();
    const auto exact = ffnshape::geometry::detail::uniform_transport(cost.data_ptr<double>(), n, m);
    const auto sorted = ffnshape::geometry::detail::comonotone_transport(
        std::vector<double>(x.data_ptr<double>(), x.data_ptr<double>() + n),
        std::vector<double>(y.data_ptr<double>(), y.data_ptr<double>() + m));
    const auto t = torch::from_blob(const_cast<double*>(sorted.mass.data()), {n, m}, torch::kDouble);
    EXPECT_NEAR((t * cost).sum().item<double>(), exact.cost, 1e-12) << n << " x " << m;
  }
  // The transport simplex reaches the same optimal cost, from the north-west corner and warm-started from
  // the optimal basis of another cost; integer costs with many ties exercise degenerate pivots.
  for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{{7, 11}, {20, 20}, {31, 17}, {60, 45}}) {
    ffnshape::geometry::detail::TransportBasis basis;
    for (int round = 0; round < 3; ++round) {
      const auto cost = (round == 1 ? torch::randint(0, 4, {n, m}).to(torch::kDouble) : torch::randn({n, m}, torch::kDouble))
                            .contiguous();
      const auto simplex = ffnshape::geometry::detail::uniform_transport_simplex(cost.data_ptr<double>(), n, m, basis);
      const auto paths = ffnshape::geometry::detail::uniform_transport(cost.data_ptr<double>(), n, m);
      EXPECT_NEAR(simplex.cost, paths.cost, 1e-12) << n << " x " << m << " round " << round;
      const auto t = torch::from_blob(const_cast<double*>(simplex.mass.data()), {n, m}, torch::kDouble);
      EXPECT_TRUE(torch::allclose(t.sum(1), torch::full({n}, 1.0 / n, torch::kDouble), 0, 1e-15));
      EXPECT_TRUE(torch::allclose(t.sum(0), torch::full({m}, 1.0 / m, torch::kDouble), 0, 1e-15));
    }
  }
  // Marginals of a plan with fractional splits (supplies 11, demands 7 units).
  const auto cost = torch::randn({7, 11}, torch::kDouble).contiguous();
  const auto plan = ffnshape::geometry::detail::uniform_transport(cost.data_ptr<double>(), 7, 11);
  const auto t = torch::from_blob(const_cast<double*>(plan.mass.data()), {7, 11}, torch::kDouble);
  EXPECT_TRUE(torch::allclose(t.sum(1), torch::full({7}, 1.0 / 7, torch::kDouble), 0, 1e-15));
  EXPECT_TRUE(torch::allclose(t.sum(0), torch::full({11}, 1.0 / 11, torch::kDouble), 0, 1e-15));
  EXPECT_GE(t.min().item<double>(), 0.0);
}

TEST(Gromov, IsometricCloudsHaveZeroDiscrepancy) {
  torch::manual_seed(7);
  for (int64_t n : {12, 50, 130}) {
    const auto x = torch::randn({n, 5}, torch::kDouble);
    const auto rotation = std::get<0>(torch::linalg_qr(torch::randn({5, 5}, torch::kDouble)));
    const auto y = x.mm(rotation) + torch::tensor({3.0, -1.0, 0.5, 2.0, -4.0}, torch::kDouble);
    EXPECT_NEAR(gromov_wasserstein(pairwise_distances(x), pairwise_distances(y)), 0.0, 1e-12) << n << " points";
  }
}

TEST(Gromov, InvariantToPermutingPoints) {
  torch::manual_seed(11);
  const auto dx = random_distances(40, 4), dy = random_distances(33, 7);
  const auto px = torch::randperm(40), py = torch::randperm(33);
  const auto dx_perm = dx.index({px}).index({torch::indexing::Slice(), px});
  const auto dy_perm = dy.index({py}).index({torch::indexing::Slice(), py});
  for (const auto& options : {GwOptions{}, entropic(1e-2)}) {
    SCOPED_TRACE(to_string(options.solver));
    const double reference = gromov_wasserstein(dx, dy, options);
    EXPECT_LT(relative_error(gromov_wasserstein(dx_perm, dy_perm, options), reference), 1e-9);
    EXPECT_LT(relative_error(gromov_wasserstein(dx, dy_perm, options), reference), 1e-9);
  }
}

TEST(Gromov, SymmetricInItsArguments) {
  torch::manual_seed(13);
  for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{{30, 30}, {24, 37}}) {
    const auto dx = random_distances(n, 3), dy = random_distances(m, 8);
    // Conditional gradient: the swapped problem follows the transposed path, so the values agree to rounding.
    EXPECT_LT(relative_error(gromov_wasserstein(dy, dx), gromov_wasserstein(dx, dy)), 1e-9) << n << " x " << m;
    // Entropic: the fixed point is symmetric, but Sinkhorn scaling (v first, then u, at most 1000 steps, as
    // POT) is not, so the two orders agree only as far as the iterations have converged.
    EXPECT_LT(relative_error(gromov_wasserstein(dy, dx, entropic(1e-2)), gromov_wasserstein(dx, dy, entropic(1e-2))),
              1e-3)
        << n << " x " << m;
  }
}

TEST(Gromov, TwoPointSpacesByHand) {
  // DX = [[0, a], [a, 0]], DY = [[0, b], [b, 0]]; couplings [[t, 1/2 - t], [1/2 - t, t]] give
  // 4 (a^2 + b^2) t (1/2 - t) + 2 (a - b)^2 (t^2 + (1/2 - t)^2), concave in t: the minimum is at a
  // matching (t = 1/2 or 0), (a - b)^2 / 2.
  for (const auto& [a, b] : std::vector<std::pair<double, double>>{{1.0, 3.0}, {2.0, 0.5}, {1.5, 1.5}}) {
    const auto dx = torch::tensor({0.0, a, a, 0.0}, torch::kDouble).view({2, 2});
    const auto dy = torch::tensor({0.0, b, b, 0.0}, torch::kDouble).view({2, 2});
    EXPECT_NEAR(gromov_wasserstein(dx, dy), (a - b) * (a - b) / 2, 1e-14) << a << " vs " << b;
  }
  // Unequal sizes: two points at distance a against three at mutual distance c. On couplings the quadratic
  // part is -2 a c |T - T0|^2, strictly concave, so the minimum is at a vertex of the transport polytope: one
  // column of Y split between the rows, the other two sent whole. The definition, summed over all of them:
  const double a = 1.0, c = 2.0;
  const auto dx = torch::tensor({0.0, a, a, 0.0}, torch::kDouble).view({2, 2});
  const auto dy = c * (torch::ones({3, 3}, torch::kDouble) - torch::eye(3, torch::kDouble));
  double best = std::numeric_limits<double>::infinity();
  for (int split = 0; split < 3; ++split) {  // the column shared by both rows
    double t[2][3] = {{0, 0, 0}, {0, 0, 0}};
    int other = 0;
    for (int j = 0; j < 3; ++j) {
      if (j == split) t[0][j] = t[1][j] = 1.0 / 6;
      else t[other++][j] = 1.0 / 3;
    }
    double total = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 2; ++k)
        for (int j = 0; j < 3; ++j)
          for (int l = 0; l < 3; ++l) {
            const double diff = (i == k ? 0.0 : a) - (j == l ? 0.0 : c);
            total += diff * diff * t[i][j] * t[k][l];
          }
    best = std::min(best, total);
  }
  EXPECT_NEAR(gromov_wasserstein(dx, dy), best, 1e-12);
}

TEST(Gromov, SolverNames) {
  EXPECT_EQ(parse_gw_solver("cg"), GwSolver::conditional_gradient);
  EXPECT_EQ(parse_gw_solver("entropic"), GwSolver::entropic);
  EXPECT_STREQ(to_string(GwSolver::conditional_gradient), "cg");
  EXPECT_STREQ(to_string(GwSolver::entropic), "entropic");
  EXPECT_THROW(parse_gw_solver("sinkhorn"), std::invalid_argument);
}

TEST(Gromov, BadInputIsRejected) {
  torch::manual_seed(17);
  const auto good = random_distances(6, 2);
  auto expect_error = [&](const torch::Tensor& dx, const torch::Tensor& dy, const GwOptions& options,
                          const std::string& fragment) {
    try {
      gromov_wasserstein(dx, dy, options);
      ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error(torch::zeros({3, 4}, torch::kDouble), good, {}, "square");
  expect_error(good, torch::zeros({5}, torch::kDouble), {}, "square");
  expect_error(torch::zeros({1, 1}, torch::kDouble), good, {}, "at least 2");
  auto asymmetric = good.clone();
  asymmetric[0][1] = 5.0;
  expect_error(asymmetric, good, {}, "not symmetric");
  auto with_nan = good.clone();
  with_nan[2][3] = NAN, with_nan[3][2] = NAN;
  expect_error(good, with_nan, {}, "NaN");
  auto with_inf = good.clone();
  with_inf[0][0] = INFINITY;
  expect_error(with_inf, good, entropic(1e-2), "infinite");
  expect_error(good, good, entropic(0.0), "epsilon");
  expect_error(good, good, entropic(-1.0), "epsilon");
  GwOptions negative_iterations;
  negative_iterations.max_iter = -1;
  expect_error(good, good, negative_iterations, "max_iter");
  // Entropic scaling that leaves double range says so instead of returning a meaningless value.
  expect_error(1000.0 * good, good, entropic(1e-3), "epsilon");
}
