// Degree-1 Rips persistence and diagram distances against references that do not share our code: the
// circle's known barcode, GUDHI's C++ persistent cohomology, the ripser program, and exact Wasserstein
// distances from GUDHI + POT (tests/fixtures/diagram_distances.txt).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <gudhi/Persistent_cohomology.h>
#include <gudhi/Rips_complex.h>
#include <gudhi/Simplex_tree.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "ffnshape/geometry/persistence.h"
#include "temp_dir.h"

using namespace ffnshape::geometry;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Exactly symmetric Euclidean distances of a random Gaussian cloud.
torch::Tensor random_distances(int64_t n, int64_t dim, uint64_t seed) {
  torch::manual_seed(seed);
  const auto x = torch::randn({n, dim}, torch::kDouble);
  return (x.unsqueeze(1) - x.unsqueeze(0)).norm(2, -1);  // |x_i - x_j| and |x_j - x_i| are computed alike
}

// N evenly spaced points on the unit circle with distances from the step alone, so equal chords are
// exactly equal (many ties, which exercise the refinement of the filtration).
torch::Tensor circle_distances(int64_t n) {
  auto d = torch::zeros({n, n}, torch::kDouble);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t step = std::min((i - j + n) % n, (j - i + n) % n);
      d[i][j] = 2 * std::sin(M_PI * step / n);
    }
  }
  return d;
}

// The same circle from coordinates (distances rounded differently, no exact ties).
torch::Tensor circle_points(int64_t n, double radius, double cx) {
  auto x = torch::zeros({n, 2}, torch::kDouble);
  for (int64_t i = 0; i < n; ++i) {
    x[i][0] = cx + radius * std::cos(2 * M_PI * i / n);
    x[i][1] = radius * std::sin(2 * M_PI * i / n);
  }
  return x;
}

torch::Tensor euclidean(const torch::Tensor& x) { return (x.unsqueeze(1) - x.unsqueeze(0)).norm(2, -1); }

// GUDHI: Rips complex up to triangles, persistent cohomology over Z/2, dimension-1 intervals.
PersistenceDiagram gudhi_h1(const torch::Tensor& distances, double threshold = kInf) {
  using SimplexTree = Gudhi::Simplex_tree<Gudhi::Simplex_tree_options_full_featured>;
  using Rips = Gudhi::rips_complex::Rips_complex<SimplexTree::Filtration_value>;
  using Cohomology = Gudhi::persistent_cohomology::Persistent_cohomology<SimplexTree, Gudhi::persistent_cohomology::Field_Zp>;
  const int64_t n = distances.size(0);
  const auto d = distances.accessor<double, 2>();
  std::vector<std::vector<double>> lower(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) lower[i].push_back(d[i][j]);
  }
  Rips rips(lower, threshold);
  SimplexTree tree;
  rips.create_complex(tree, 2);
  Cohomology cohomology(tree);
  cohomology.init_coefficients(2);
  cohomology.compute_persistent_cohomology(0.0);
  PersistenceDiagram result;
  for (const auto& [birth, death] : cohomology.intervals_in_dimension(1)) {
    if (death > birth) result.push_back({birth, death});
  }
  std::sort(result.begin(), result.end(), [](const PersistencePair& a, const PersistencePair& b) {
    return a.birth < b.birth || (a.birth == b.birth && a.death < b.death);
  });
  return result;
}

std::string show(const PersistenceDiagram& diagram) {
  std::ostringstream out;
  out.precision(10);
  for (const auto& p : diagram) out << "(" << p.birth << ", " << p.death << ") ";
  return out.str();
}

// Equal pair for pair (both sorted by (birth, death)).
void expect_same(const PersistenceDiagram& ours, const PersistenceDiagram& reference, double tolerance,
                 const std::string& what) {
  ASSERT_EQ(ours.size(), reference.size()) << what << "\nours:      " << show(ours) << "\nreference: " << show(reference);
  for (size_t k = 0; k < ours.size(); ++k) {
    EXPECT_NEAR(ours[k].birth, reference[k].birth, tolerance) << what << " pair " << k;
    if (std::isinf(reference[k].death)) {
      EXPECT_TRUE(std::isinf(ours[k].death)) << what << " pair " << k << " should never die";
    } else {
      EXPECT_NEAR(ours[k].death, reference[k].death, tolerance) << what << " pair " << k;
    }
  }
}

// Runs the ripser program on the lower triangle (written with %.17g); returns its dimension-1 intervals.
// Ripser computes in float32 and prints about 6 significant digits.
PersistenceDiagram ripser_h1(const torch::Tensor& distances, double threshold = kInf) {
  ffnshape::testing::TempDir dir("ffnshape_ripser");
  const auto matrix = dir.file("matrix.txt"), output = dir.file("out.txt");
  {
    FILE* f = std::fopen(matrix.c_str(), "w");
    const auto d = distances.accessor<double, 2>();
    for (int64_t i = 1; i < distances.size(0); ++i) {
      for (int64_t j = 0; j < i; ++j) std::fprintf(f, j ? ",%.17g" : "%.17g", d[i][j]);
      std::fprintf(f, "\n");
    }
    std::fclose(f);
  }
  std::string command = "/usr/bin/ripser --format lower-distance --dim 1 ";
  if (!std::isinf(threshold)) command += "--threshold " + std::to_string(threshold) + " ";
  command += matrix + " > " + output;
  if (std::system(command.c_str()) != 0) throw std::runtime_error("ripser failed: " + command);
  std::ifstream in(output);
  std::string line;
  bool in_dim1 = false;
  PersistenceDiagram result;
  while (std::getline(in, line)) {
    if (line.rfind("persistence intervals in dim", 0) == 0) {
      in_dim1 = line.find("dim 1:") != std::string::npos;
      continue;
    }
    if (!in_dim1) continue;
    const auto open = line.find('['), comma = line.find(','), close = line.find(')');
    if (open == std::string::npos || comma == std::string::npos || close == std::string::npos) continue;
    const double birth = std::stod(line.substr(open + 1, comma - open - 1));
    const std::string death_text = line.substr(comma + 1, close - comma - 1);
    const bool never = death_text.find_first_not_of(' ') == std::string::npos;
    result.push_back({birth, never ? kInf : std::stod(death_text)});
  }
  return result;
}

// Ripser's float32 arithmetic can turn a bar shorter than its precision into a zero-length one or the
// reverse, so bars shorter than `tolerance` are ignored on both sides; every other bar must match one bar
// of the other diagram to within `tolerance` (relative to the largest distance).
void expect_same_as_ripser(const PersistenceDiagram& ours, const PersistenceDiagram& ripser, double tolerance,
                           const std::string& what) {
  auto long_bars = [&](const PersistenceDiagram& d) {
    PersistenceDiagram kept;
    for (const auto& p : d) {
      if (p.death - p.birth > tolerance) kept.push_back(p);
    }
    return kept;
  };
  const auto a = long_bars(ours), b = long_bars(ripser);
  std::vector<bool> used(b.size(), false);
  size_t unmatched = 0;
  for (const auto& p : a) {
    bool found = false;
    for (size_t k = 0; k < b.size() && !found; ++k) {
      const bool deaths_agree = std::isinf(p.death) ? std::isinf(b[k].death)
                                                    : !std::isinf(b[k].death) && std::fabs(p.death - b[k].death) <= tolerance;
      if (!used[k] && std::fabs(p.birth - b[k].birth) <= tolerance && deaths_agree) used[k] = found = true;
    }
    if (!found) ++unmatched;
  }
  EXPECT_EQ(unmatched, 0u) << what << "\nours:   " << show(a) << "\nripser: " << show(b);
  EXPECT_EQ(a.size(), b.size()) << what;
}

struct CloudCase {
  int64_t n, dim;
  uint64_t seed;
};
const std::vector<CloudCase> kClouds = {{30, 2, 1}, {60, 2, 2}, {40, 3, 3}, {100, 3, 4},
                                        {80, 8, 5}, {150, 8, 6}, {120, 32, 7}, {150, 64, 8}};

// A hard cloud: Gaussian noise in 64-D under angular distances, where the full filtration reaches almost
// every triangle and the reduction grows without a useful bound (a 1000-point one ran for more than 20
// minutes). Small budgets must stop it with a message that says what to change.
torch::Tensor hard_cloud_distances(int64_t n) {
  torch::manual_seed(64);
  const auto u = torch::nn::functional::normalize(torch::randn({n, 64}, torch::kDouble),
                                                  torch::nn::functional::NormalizeFuncOptions().dim(1));
  return 2.0 * torch::asin((u.unsqueeze(1) - u.unsqueeze(0)).norm(2, -1).clamp_max(2.0) / 2.0);
}

std::string budget_message(const torch::Tensor& d, const PersistenceBudget& budget) {
  try {
    rips_h1(d, kInf, budget);
  } catch (const PersistenceBudgetExceeded& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Persistence, CircleHasOneBarFromNeighbourChordToTheThirdChord) {
  // Vietoris-Rips complex of N evenly spaced points on a circle (N divisible by 3) is homotopy equivalent
  // to a circle from the neighbour chord 2 sin(pi/N) until edges reach N/3 steps, where the equilateral
  // triangles on every third point fill the loop (Adamaszek & Adams 2017): death = 2 sin(pi/3) = sqrt(3),
  // whatever the N. Every other pair has zero persistence.
  const int64_t n = 24;
  for (const auto& d : {circle_distances(n), euclidean(circle_points(n, 1.0, 0.0))}) {
    const auto diagram = rips_h1(d);
    ASSERT_EQ(diagram.size(), 1u) << show(diagram);
    EXPECT_NEAR(diagram[0].birth, 2 * std::sin(M_PI / n), 1e-12);
    EXPECT_NEAR(diagram[0].death, std::sqrt(3.0), 1e-12);
    expect_same(diagram, gudhi_h1(d), 1e-12, "circle vs GUDHI");
  }
  // Scale and dtype: twice the radius doubles both ends; float32 input is computed in float64.
  const auto big = rips_h1(circle_distances(n).mul(2.0).to(torch::kFloat));
  ASSERT_EQ(big.size(), 1u);
  EXPECT_NEAR(big[0].death, 2 * std::sqrt(3.0), 1e-6);
}

TEST(Persistence, TwoSeparateCirclesGiveTwoBars) {
  // A unit circle of 24 points and one of radius 2 with 30 points, 10 apart: both loops live and die on
  // their own (2 sin(pi/N) to 2 r sin(pi/3)) long before the circles see each other.
  const auto x = torch::cat({circle_points(24, 1.0, 0.0), circle_points(30, 2.0, 10.0)});
  const auto d = euclidean(x);
  const auto diagram = rips_h1(d);
  PersistenceDiagram long_bars;
  for (const auto& p : diagram) {
    if (p.death - p.birth > 0.5) long_bars.push_back(p);
  }
  ASSERT_EQ(long_bars.size(), 2u) << show(diagram);
  EXPECT_NEAR(long_bars[0].birth, 2 * std::sin(M_PI / 24), 1e-9);
  EXPECT_NEAR(long_bars[0].death, std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(long_bars[1].birth, 4 * std::sin(M_PI / 30), 1e-9);
  EXPECT_NEAR(long_bars[1].death, 2 * std::sqrt(3.0), 1e-9);
  expect_same(diagram, gudhi_h1(d), 1e-9, "two circles vs GUDHI");
}

TEST(Persistence, GridWithTiesMatchesGudhi) {
  // A 6 x 5 integer grid: every unit square is a loop [1, sqrt 2); massive ties in the filtration.
  auto x = torch::zeros({30, 2}, torch::kDouble);
  for (int64_t k = 0; k < 30; ++k) {
    x[k][0] = static_cast<double>(k % 6);
    x[k][1] = static_cast<double>(k / 6);
  }
  const auto diagram = rips_h1(euclidean(x));
  ASSERT_EQ(diagram.size(), 20u) << show(diagram);
  for (const auto& p : diagram) {
    EXPECT_DOUBLE_EQ(p.birth, 1.0);
    EXPECT_NEAR(p.death, std::sqrt(2.0), 1e-15);
  }
  expect_same(diagram, gudhi_h1(euclidean(x)), 1e-12, "grid vs GUDHI");
}

TEST(Persistence, RandomCloudsMatchGudhi) {
  for (const auto& c : kClouds) {
    const auto d = random_distances(c.n, c.dim, c.seed);
    const auto ours = rips_h1(d);
    EXPECT_FALSE(ours.empty());
    expect_same(ours, gudhi_h1(d), 1e-9,
                "n=" + std::to_string(c.n) + " dim=" + std::to_string(c.dim) + " seed=" + std::to_string(c.seed));
  }
}

TEST(Persistence, ThresholdLeavesEssentialClassesAndMatchesGudhi) {
  // Below the enclosing radius some loops are never filled in: they come out with death = +infinity.
  bool saw_essential = false;
  for (const auto& c : std::vector<CloudCase>{{60, 2, 11}, {100, 3, 12}, {80, 8, 13}}) {
    const auto d = random_distances(c.n, c.dim, c.seed);
    const double threshold = d.median().item<double>() * 0.6;
    const auto ours = rips_h1(d, threshold);
    for (const auto& p : ours) {
      EXPECT_LE(p.birth, threshold);
      saw_essential |= std::isinf(p.death);
    }
    expect_same(ours, gudhi_h1(d, threshold), 1e-9, "threshold, n=" + std::to_string(c.n));
  }
  EXPECT_TRUE(saw_essential);
  // A threshold above the enclosing radius changes nothing.
  const auto d = random_distances(50, 3, 14);
  expect_same(rips_h1(d, d.max().item<double>() * 2), rips_h1(d), 0.0, "large threshold");
}

TEST(Persistence, RandomCloudsMatchTheRipserProgram) {
  if (access("/usr/bin/ripser", X_OK) != 0) GTEST_SKIP() << "/usr/bin/ripser is not installed";
  for (const auto& c : kClouds) {
    const auto d = random_distances(c.n, c.dim, c.seed);
    const double tolerance = 2e-5 * d.max().item<double>();
    expect_same_as_ripser(rips_h1(d), ripser_h1(d), tolerance, "n=" + std::to_string(c.n) + " dim=" + std::to_string(c.dim));
  }
  const auto d = random_distances(100, 3, 12);
  const double threshold = 0.6 * d.median().item<double>();
  expect_same_as_ripser(rips_h1(d, threshold), ripser_h1(d, threshold), 2e-5 * d.max().item<double>(), "threshold");
}

TEST(Persistence, SmallOrEmptyCloudsHaveNoLoops) {
  EXPECT_TRUE(rips_h1(torch::zeros({0, 0})).empty());
  EXPECT_TRUE(rips_h1(random_distances(2, 3, 1)).empty());
  EXPECT_TRUE(rips_h1(random_distances(3, 3, 1)).empty());  // a triangle is filled in as soon as it closes
  // Four points on a square: a loop from side 1 to diagonal sqrt 2.
  const auto square = euclidean(torch::tensor({0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0}, torch::kDouble).view({4, 2}));
  const auto diagram = rips_h1(square);
  ASSERT_EQ(diagram.size(), 1u);
  EXPECT_DOUBLE_EQ(diagram[0].birth, 1.0);
  EXPECT_DOUBLE_EQ(diagram[0].death, std::sqrt(2.0));
}

TEST(Persistence, RejectsBadInput) {
  auto expect_message = [](const std::function<void()>& call, const std::string& fragment) {
    try {
      call();
      ADD_FAILURE() << "expected std::invalid_argument mentioning '" << fragment << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  const auto good = random_distances(10, 3, 1);
  expect_message([] { rips_h1(torch::zeros({4, 5})); }, "square");
  expect_message([] { rips_h1(torch::zeros({4})); }, "square");
  auto asymmetric = good.clone();
  asymmetric[2][5] += 0.1;
  expect_message([&] { rips_h1(asymmetric); }, "not symmetric");
  auto nan = good.clone();
  nan[1][3] = std::nan("");
  nan[3][1] = std::nan("");
  expect_message([&] { rips_h1(nan); }, "NaN");
  auto negative = good.clone();
  negative[1][3] = negative[3][1] = -1.0;
  expect_message([&] { rips_h1(negative); }, "negative");
  auto diagonal = good.clone();
  diagonal[4][4] = 1.0;
  expect_message([&] { rips_h1(diagonal); }, "diagonal");
  expect_message([&] { rips_h1(good, -1.0); }, "threshold");
  expect_message([&] { rips_h1(good, std::nan("")); }, "threshold");
  expect_message([] { rips_h1(torch::zeros({4, 4}, torch::kLong)); }, "floating");
}

TEST(Persistence, BudgetStopsAHardCloudWithAMessage) {
  const auto d = hard_cloud_distances(400);
  const auto memory = budget_message(d, {16.0 * 1024 * 1024, 0.0});  // 16 MiB, no time limit
  EXPECT_NE(memory.find("400 points stopped at its memory budget (0.0156 GiB of memory, no time limit)"),
            std::string::npos) << memory;
  EXPECT_NE(memory.find("use fewer points, a threshold"), std::string::npos) << memory;
  const auto time = budget_message(d, {0.0, 0.05});
  EXPECT_NE(time.find("stopped at its time budget (no memory limit, 0.05 s)"), std::string::npos) << time;
  // A matrix too large for the budget is refused before any work.
  const auto upfront = budget_message(torch::zeros({1000, 1000}, torch::kDouble), {1024.0 * 1024, 0.0});
  EXPECT_NE(upfront.find("1000 points needs 0.00931 GiB before it starts"), std::string::npos) << upfront;
  // Within budget (and with a threshold) the answer is unchanged.
  const auto small = random_distances(60, 3, 9);
  expect_same(rips_h1(small, kInf, {64.0 * 1024 * 1024, 60.0}), rips_h1(small, kInf, {0.0, 0.0}), 0.0, "budget");
  EXPECT_THROW(rips_h1(small, kInf, {-1.0, 1.0}), std::invalid_argument);
  EXPECT_THROW(rips_h1(small, kInf, {1e9, std::nan("")}), std::invalid_argument);
}

TEST(DiagramDistance, HandComputedCases) {
  // Under L-infinity a point (b, d) is (d - b) / 2 from the diagonal, for every q.
  for (double q : {1.0, 2.0, 3.5}) {
    EXPECT_NEAR(diagram_distance({}, {{1.0, 4.0}}, q), 1.5, 1e-9);
    EXPECT_NEAR(diagram_distance({{1.0, 4.0}}, {}, q), 1.5, 1e-9);
    EXPECT_DOUBLE_EQ(diagram_distance({}, {}, q), 0.0);
  }
  // Two single points: matching them costs max(|1 - 0|, |4.5 - 4|) = 1, cheaper than two trips to the
  // diagonal (2 and 1.75).
  EXPECT_NEAR(diagram_distance({{0.0, 4.0}}, {{1.0, 4.5}}, 2.0), 1.0, 1e-9);
  EXPECT_NEAR(diagram_distance({{0.0, 4.0}}, {{1.0, 4.5}}, 1.0), 1.0, 1e-9);
  // Far apart and short-lived: both go to the diagonal. q = 1 adds the costs, q = 2 adds their squares.
  EXPECT_NEAR(diagram_distance({{0.0, 2.0}}, {{10.0, 12.0}}, 1.0), 2.0, 1e-9);
  EXPECT_NEAR(diagram_distance({{0.0, 2.0}}, {{10.0, 12.0}}, 2.0), std::sqrt(2.0), 1e-9);
  // One pair matched (cost 0.1), one to the diagonal (0.75).
  const PersistenceDiagram a = {{0.0, 1.0}, {0.5, 2.0}}, b = {{0.0, 1.1}};
  EXPECT_NEAR(diagram_distance(a, b, 1.0), 0.85, 1e-9);
  EXPECT_NEAR(diagram_distance(a, b, 2.0), std::sqrt(0.1 * 0.1 + 0.75 * 0.75), 1e-9);
  EXPECT_NEAR(diagram_distance(b, a, 2.0), std::sqrt(0.1 * 0.1 + 0.75 * 0.75), 1e-9);
  EXPECT_DOUBLE_EQ(diagram_distance(a, a, 2.0), 0.0);
}

TEST(DiagramDistance, L2GroundNormByHand) {
  const double l2 = 2.0, r2 = std::sqrt(2.0);
  // Under L2 a point (b, d) is (d - b) / sqrt 2 from the diagonal (the nearest diagonal point is its
  // projection ((b + d) / 2, (b + d) / 2)).
  EXPECT_NEAR(diagram_distance({}, {{1.0, 4.0}}, 2.0, l2), 3.0 / r2, 1e-9);
  // Matching (0, 4) with (1, 4.5) costs |(1, 0.5)| = sqrt 1.25, cheaper than 4 / sqrt 2 + 3.5 / sqrt 2.
  EXPECT_NEAR(diagram_distance({{0.0, 4.0}}, {{1.0, 4.5}}, 2.0, l2), std::sqrt(1.25), 1e-9);
  // Both to the diagonal, sqrt 2 each: q = 1 adds them, q = 2 adds their squares.
  EXPECT_NEAR(diagram_distance({{0.0, 2.0}}, {{10.0, 12.0}}, 1.0, l2), 2.0 * r2, 1e-9);
  EXPECT_NEAR(diagram_distance({{0.0, 2.0}}, {{10.0, 12.0}}, 2.0, l2), 2.0, 1e-9);
  // (0.5, 2) matched to (0, 1.1) would cost |(0.5, 0.9)| = 1.03; instead (0, 1) -> (0, 1.1) costs 0.1 and
  // (0.5, 2) goes to the diagonal at 1.5 / sqrt 2.
  const PersistenceDiagram a = {{0.0, 1.0}, {0.5, 2.0}}, b = {{0.0, 1.1}};
  EXPECT_NEAR(diagram_distance(a, b, 2.0, l2), std::sqrt(0.01 + 1.125), 1e-9);
  // Essential classes are matched by birth whatever the norm: 0.5, plus (1, 2) to the diagonal.
  EXPECT_NEAR(diagram_distance({{0.0, kInf}, {1.0, 2.0}}, {{0.5, kInf}}, 2.0, l2), std::sqrt(0.25 + 0.5), 1e-9);
  // The default stays L-infinity; p < 1 is no norm.
  EXPECT_NEAR(diagram_distance({}, {{1.0, 4.0}}), 1.5, 1e-9);
  EXPECT_THROW(diagram_distance(a, b, 2.0, 0.5), std::invalid_argument);
  EXPECT_THROW(diagram_distance(a, b, 2.0, std::nan("")), std::invalid_argument);
}

TEST(DiagramDistance, PointsAtInfinityAreMatchedByBirth) {
  // Essential classes pair up among themselves by birth: |0 - 0.5| here, plus (1, 2) to the diagonal.
  EXPECT_NEAR(diagram_distance({{0.0, kInf}, {1.0, 2.0}}, {{0.5, kInf}}, 2.0), std::sqrt(0.25 + 0.25), 1e-9);
  EXPECT_NEAR(diagram_distance({{0.0, kInf}, {1.0, 2.0}}, {{0.5, kInf}}, 1.0), 1.0, 1e-9);
  // Different numbers of them: no finite matching.
  EXPECT_TRUE(std::isinf(diagram_distance({{0.0, kInf}}, {{1.0, 2.0}}, 2.0)));
}

TEST(DiagramDistance, MatchesExactOptimalTransport) {
  std::ifstream in(std::string(FFNSHAPE_SOURCE_DIR) + "/tests/fixtures/diagram_distances.txt");
  ASSERT_TRUE(in) << "missing tests/fixtures/diagram_distances.txt";
  auto read_diagram = [&](const char* label) {
    std::string tag;
    size_t count = 0;
    in >> tag >> count;
    EXPECT_EQ(tag, label);
    PersistenceDiagram d(count);
    for (auto& p : d) in >> p.birth >> p.death;
    return d;
  };
  std::string word;
  int cases = 0;
  while (in >> word) {
    if (word == "#") {
      std::getline(in, word);
      continue;
    }
    ASSERT_EQ(word, "case");
    std::string name;
    double q = 0, expected = 0;
    in >> name >> q >> expected;
    const auto a = read_diagram("a"), b = read_diagram("b");
    const double ours = diagram_distance(a, b, q);
    EXPECT_NEAR(ours, expected, 1e-6 * expected) << name << " q=" << q;
    EXPECT_NEAR(diagram_distance(b, a, q), ours, 1e-6 * expected) << name << " (swapped)";
    ++cases;
  }
  EXPECT_GE(cases, 16);
}

TEST(DiagramDistance, RejectsBadInput) {
  EXPECT_THROW(diagram_distance({{0.0, 1.0}}, {}, 0.5), std::invalid_argument);
  EXPECT_THROW(diagram_distance({{0.0, 1.0}}, {}, -2.0), std::invalid_argument);
  EXPECT_THROW(diagram_distance({{0.0, 1.0}}, {}, std::nan("")), std::invalid_argument);
  EXPECT_THROW(diagram_distance({{0.0, 1.0}}, {}, kInf), std::invalid_argument);
  EXPECT_THROW(diagram_distance({{std::nan(""), 1.0}}, {}), std::invalid_argument);
  EXPECT_THROW(diagram_distance({}, {{2.0, 1.0}}), std::invalid_argument);
  EXPECT_THROW(diagram_distance({}, {{kInf, kInf}}), std::invalid_argument);
}
