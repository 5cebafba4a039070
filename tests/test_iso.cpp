// The iso-parameter solver: paper settings reach 0.001%, and on small problems its answer equals an
// exhaustive search.
#include <gtest/gtest.h>

#include <cmath>

#include "ffnshape/config/run_config.h"
#include "ffnshape/params/iso.h"

using namespace ffnshape;

namespace {

ModelConfig load(const std::string& relative) {
  return load_run_config(std::string(FFNSHAPE_SOURCE_DIR) + "/" + relative).model;
}

FreeDimension dim(const std::string& name, int64_t lo, int64_t hi, int64_t multiple = 1) {
  return FreeDimension{name, lo, hi, multiple};
}

}  // namespace

TEST(Iso, Matches113MConventionalWithHourglassK4L6) {
  IsoProblem p;
  p.budget = count_parameters(load("configs/paper/hourglass-113m-conventional.yaml")).total();
  p.variant = load("configs/paper/hourglass-113m-conventional.yaml");
  p.variant.ffn.kind = FfnKind::hourglass;
  p.variant.ffn.k = 4;
  p.variant.n_layers = 6;
  p.variant.head_dim.reset();  // attention follows d_model
  p.free = {dim("d_model", 256, 4096, 12), dim("ffn.hidden", 16, 4096)};  // d_model divisible by 12 heads
  const auto s = solve_iso(p);
  ASSERT_TRUE(s.within_tolerance) << s.explanation;
  EXPECT_LE(std::abs(s.rel_error), 1e-5);
  EXPECT_EQ(s.params, count_parameters(s.config).total());
  EXPECT_EQ(s.config.n_layers, 6);
  EXPECT_EQ(s.config.ffn.k, 4);
  EXPECT_FALSE(find_problem(s.config).has_value());
}

TEST(Iso, ResolvesThe906MPublicPair) {
  const auto conventional = load("configs/paper/hourglass-906m-conventional.yaml");
  const auto published = load("configs/paper/hourglass-906m-hourglass.yaml");
  for (auto how : {BudgetCount::total, BudgetCount::non_embedding}) {
    IsoProblem p;
    p.count = how;
    p.budget = counted_parameters(conventional, how);
    p.variant = published;
    p.free = {dim("d_model", 1024, 4096), dim("ffn.hidden", 256, 4096)};
    const auto s = solve_iso(p);
    ASSERT_TRUE(s.within_tolerance) << s.explanation;
    EXPECT_LE(std::abs(s.rel_error), 1e-5);
    if (how == BudgetCount::non_embedding) {
      // The public pair matches non-embedding counts within 0.3%; the solution stays near its shape.
      EXPECT_NEAR(static_cast<double>(s.config.d_model) / 2496.0, 1.0, 0.02);
      EXPECT_NEAR(static_cast<double>(s.config.ffn_uniform_hidden()) / 2016.0, 1.0, 0.05);
    }
  }
}

// Exhaustive search over every shape on the grid.
struct Exhaustive {
  double min_error = 1e300;
  double min_within_distance = 1e300;
};

Exhaustive exhaustive(const IsoProblem& p) {
  Exhaustive e;
  const auto& a = p.free[0];
  const auto& b = p.free[1];
  for (int64_t x = a.min; x <= a.max; x += a.multiple_of) {
    for (int64_t y = b.min; y <= b.max; y += b.multiple_of) {
      auto c = p.variant;
      c.d_model = x;
      c.ffn.hidden = y;
      if (find_problem(c)) continue;
      const double err = std::abs(static_cast<double>(counted_parameters(c, p.count) - p.budget)) / p.budget;
      e.min_error = std::min(e.min_error, err);
      if (err <= p.tolerance) {
        const double dist = std::pow(std::log(x / static_cast<double>(p.variant.d_model)), 2) +
                            std::pow(std::log(y / static_cast<double>(*p.variant.ffn.hidden)), 2);
        e.min_within_distance = std::min(e.min_within_distance, dist);
      }
    }
  }
  return e;
}

TEST(Iso, AgreesWithExhaustiveSearch) {
  ModelConfig variant;
  variant.vocab_size = 512;
  variant.d_model = 96;
  variant.n_layers = 3;
  variant.n_heads = 4;  // d_model must stay divisible by 4
  variant.ffn.kind = FfnKind::hourglass;
  variant.ffn.k = 2;
  variant.ffn.hidden = 40;
  for (double tolerance : {1e-5, 1e-3, 2e-2}) {
    for (int64_t budget : {400'000, 777'777, 1'234'567}) {
      IsoProblem p;
      p.variant = variant;
      p.budget = budget;
      p.tolerance = tolerance;
      p.free = {dim("d_model", 8, 400, 2), dim("ffn.hidden", 1, 200)};
      const auto s = solve_iso(p);
      const auto e = exhaustive(p);
      const double err = std::abs(s.rel_error);
      if (e.min_within_distance < 1e300) {
        ASSERT_TRUE(s.within_tolerance);
        const double dist = std::pow(std::log(s.config.d_model / 96.0), 2) +
                            std::pow(std::log(s.config.ffn_uniform_hidden() / 40.0), 2);
        EXPECT_NEAR(dist, e.min_within_distance, 1e-12) << budget << " " << tolerance;
      } else {
        EXPECT_FALSE(s.within_tolerance);
        EXPECT_NEAR(err, e.min_error, 1e-15) << budget << " " << tolerance;
        EXPECT_FALSE(s.explanation.empty());
      }
    }
  }
}

TEST(Iso, ExplainsAnUnreachableTolerance) {
  auto variant = load("configs/paper/hourglass-113m-conventional.yaml");
  IsoProblem p;
  p.variant = variant;
  p.budget = count_parameters(variant).total() + 12345;
  p.free = {dim("n_layers", 1, 48)};  // one layer is about 8% of the budget
  const auto s = solve_iso(p);
  EXPECT_FALSE(s.within_tolerance);
  EXPECT_EQ(s.config.n_layers, 12);  // still the closest shape
  EXPECT_NE(s.explanation.find("n_layers"), std::string::npos) << s.explanation;
}

TEST(Iso, ParsesFreeDimensions) {
  ModelConfig v;
  v.d_model = 512;
  auto d = parse_free_dimension("model.d_model=256..4096/64", v);
  EXPECT_EQ(d.name, "d_model");
  EXPECT_EQ(d.min, 256);
  EXPECT_EQ(d.max, 4096);
  EXPECT_EQ(d.multiple_of, 64);
  d = parse_free_dimension("d_model", v);
  EXPECT_EQ(d.max, 2048);  // default: up to 4x the variant's value
  d = parse_free_dimension("ffn.k/2", v);
  EXPECT_EQ(d.multiple_of, 2);
  EXPECT_THROW(parse_free_dimension("vocab_size", v), ConfigError);
  EXPECT_THROW(parse_free_dimension("d_model=9..3", v), ConfigError);
  EXPECT_THROW(parse_free_dimension("d_model=a..3", v), ConfigError);
  EXPECT_THROW(parse_free_dimension("d_model/0", v), ConfigError);
}

TEST(Iso, RejectsImpossibleRequests) {
  auto variant = load("configs/paper/hourglass-113m-conventional.yaml");
  IsoProblem p;
  p.variant = variant;
  p.budget = 113'000'000;
  p.free = {dim("ffn.k", 1, 8)};
  EXPECT_THROW(solve_iso(p), ConfigError);  // conventional FFNs have K = 1
  p.variant.ffn.widths = std::vector<int64_t>(12, 3072);
  p.free = {dim("ffn.hidden", 1, 8000)};
  EXPECT_THROW(solve_iso(p), ConfigError);  // widths fix the hidden sizes
  p.variant = variant;
  p.free = {};
  EXPECT_THROW(solve_iso(p), ConfigError);
  p.free = {dim("d_model", 100, 110, 64)};  // no multiple of 64 in range
  EXPECT_THROW(solve_iso(p), ConfigError);
}
