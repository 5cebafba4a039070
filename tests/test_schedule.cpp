// Width schedules: the surrogate optimizer against its closed form and KKT conditions, budget-exact
// rounding, the hand-designed rules against their formulas, and scheduled configs on budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "ffnshape/config/run_config.h"
#include "ffnshape/params/count.h"
#include "ffnshape/schedule/geometry_optimizer.h"
#include "ffnshape/schedule/profile_pool.h"
#include "ffnshape/schedule/schedule.h"
#include "temp_dir.h"

using namespace ffnshape;
using namespace ffnshape::schedule;

namespace {

constexpr double kPi = 3.14159265358979323846;

const char* kBase = R"(
model:
  vocab_size: 512
  d_model: 64
  n_layers: 8
  n_heads: 4
  ffn: {kind: conventional, hidden: 192, multiple_of: 8}
)";

ModelConfig base_model(const std::vector<std::string>& overrides = {}) {
  return load_run_config_from_string(kBase, overrides).model;
}

double total(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
int64_t total(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// JSON has no NaN: a profile writes null for a value that could not be measured.
std::string json_number(double v) { return std::isfinite(v) ? std::to_string(v) : "null"; }

// A profile file with the given work under every statistic and geometry.
std::string write_profile(const ffnshape::testing::TempDir& dir, const std::vector<double>& work, double d_int = 10.0) {
  std::ofstream out(dir.file("profile.json"));
  out << R"({"format": "ffnshape-profile", "version": 1, "n_layers": )" << work.size() << R"(, "layers": [)";
  for (size_t l = 0; l < work.size(); ++l) {
    out << (l ? "," : "") << R"({"layer": )" << l << R"(, "intrinsic_dimension": {"in": )" << d_int
        << R"(, "out": 9}, "work": {)";
    const char* stats[] = {"shift", "gw", "topo"};
    for (int s = 0; s < 3; ++s) {
      out << (s ? "," : "") << '"' << stats[s] << R"(": {"raw": )" << json_number(work[l] * (l + 1))
          << R"(, "spherical": )" << json_number(work[l]) << R"(, "hyperbolic": )" << json_number(work[l]) << "}";
    }
    out << "}}";
  }
  out << "]}";
  return dir.file("profile.json");
}

ScheduleConfig rule(const std::string& name, const std::string& profile = "") {
  ScheduleConfig s;
  s.rule = name;
  s.profile = profile;
  return s;
}

}  // namespace

TEST(ScheduleOptimizer, MatchesTheClosedFormWhenNoBoundIsActive) {
  // Equal exponents and weights: w_l = B g_l^(1/(1+a)) / sum_j g_j^(1/(1+a)).
  SurrogateProblem p{{1.0, 2.0, 4.0, 0.5}, {0.5, 0.5, 0.5, 0.5}, {}, 400.0, 1.0, 1e6};
  const auto w = solve_surrogate(p);
  double norm = 0;
  for (double g : p.work) norm += std::pow(g, 1 / 1.5);
  for (size_t l = 0; l < w.size(); ++l) EXPECT_NEAR(w[l], 400.0 * std::pow(p.work[l], 1 / 1.5) / norm, 1e-7);
}

TEST(ScheduleOptimizer, SatisfiesKktWithMixedExponentsAndWeights) {
  SurrogateProblem p{{0.3, 1.0, 2.5, 1.7, 0.9}, {0.2, 0.4, 0.3, 1.0, 0.6}, {1.0, 2.0, 0.5, 1.0, 3.0}, 1000.0, 50.0, 400.0};
  const auto w = solve_surrogate(p);
  EXPECT_NEAR(total(w), 1000.0, 1e-6);
  // Stationarity: a l g w^-(1+a) is the same multiplier mu for every layer not at a bound.
  std::vector<double> mu;
  for (size_t l = 0; l < w.size(); ++l) {
    ASSERT_GE(w[l], 50.0 - 1e-9);
    ASSERT_LE(w[l], 400.0 + 1e-9);
    if (w[l] > 50.0 + 1e-6 && w[l] < 400.0 - 1e-6) {
      mu.push_back(p.exponent[l] * p.lambda[l] * p.work[l] * std::pow(w[l], -(1 + p.exponent[l])));
    }
  }
  ASSERT_GE(mu.size(), 2u);
  for (double m : mu) EXPECT_NEAR(m / mu[0], 1.0, 1e-6);
}

TEST(ScheduleOptimizer, BudgetIsExactBoundsHoldAndMoreWorkNeverGetsLessWidth) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> work(0.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    SurrogateProblem p;
    const int n = 4 + trial;
    for (int l = 0; l < n; ++l) p.work.push_back(work(rng));
    p.exponent.assign(n, 0.3);
    p.budget = 256.0 * n;
    p.w_min = 0.5 * 256;
    p.w_max = 2.0 * 256;
    const auto w = solve_surrogate(p);
    EXPECT_NEAR(total(w), p.budget, 1e-9 * p.budget);
    for (int i = 0; i < n; ++i) {
      EXPECT_GE(w[i], p.w_min - 1e-9);
      EXPECT_LE(w[i], p.w_max + 1e-9);
      for (int j = 0; j < n; ++j) {
        if (p.work[i] > p.work[j]) EXPECT_GE(w[i], w[j] - 1e-9);
      }
    }
    const auto r = round_to_budget(w, 8, 256 * n, 128, 512);
    EXPECT_EQ(total(r), 256 * n);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(r[i] % 8, 0);
      EXPECT_GE(r[i], 128);
      EXPECT_LE(r[i], 512);
      for (int j = 0; j < n; ++j) {
        if (p.work[i] > p.work[j]) EXPECT_GE(r[i], r[j]);
      }
    }
  }
}

TEST(ScheduleOptimizer, ImpossibleBudgetsAndBadWorkAreErrors) {
  EXPECT_THROW(solve_surrogate({{1, 1}, {1, 1}, {}, 10.0, 6.0, 8.0}), std::invalid_argument);
  EXPECT_THROW(solve_surrogate({{1, NAN}, {1, 1}, {}, 10.0, 1.0, 8.0}), std::invalid_argument);
  EXPECT_THROW(solve_surrogate({{1, -1}, {1, 1}, {}, 10.0, 1.0, 8.0}), std::invalid_argument);
  EXPECT_THROW(round_to_budget({5.0, 5.0}, 4, 10, 4, 8), std::invalid_argument);  // 10 is not a multiple of 4
  EXPECT_THROW(round_to_budget({8.0, 8.0}, 4, 16, 12, 16), std::invalid_argument);  // 2 x 12 > 16
}

TEST(ScheduleOptimizer, SmoothingIsACentredMovingAverage) {
  const auto s = smooth_profile({3, 0, 6, 0, 3}, 3);
  EXPECT_DOUBLE_EQ(s[0], 1.5);  // (3 + 0) / 2 at the edge
  EXPECT_DOUBLE_EQ(s[1], 3.0);
  EXPECT_DOUBLE_EQ(s[2], 2.0);
  EXPECT_DOUBLE_EQ(s[4], 1.5);
  EXPECT_EQ(smooth_profile({1, 2, 3}, 1), (std::vector<double>{1, 2, 3}));
  EXPECT_THROW(smooth_profile({1, 2}, 2), std::invalid_argument);
  EXPECT_EQ(exponents_from_dimension({2.0, 40.0, 400.0}, 4.0, 0.05, 1.0), (std::vector<double>{1.0, 0.1, 0.05}));
}

TEST(Schedule, CosineFollowsTheTaperAndItsMeanIsTheUniformWidth) {
  const auto m = base_model();
  const auto s = make_schedule(m, rule("cosine"));
  const int64_t L = m.n_layers;
  for (int64_t l = 0; l < L; ++l) {
    const double expected = 192.0 * (0.5 + (1.5 - 0.5) * (1 + std::cos(kPi * l / (L - 1))) / 2);
    EXPECT_NEAR(s.target[l], expected, 1e-9);
  }
  EXPECT_NEAR(total(s.target) / L, 192.0, 1e-9);
  EXPECT_EQ(total(s.widths), 192 * L);
  EXPECT_EQ(s.widths.front(), 288);  // 1.5 x 192
  EXPECT_EQ(s.widths.back(), 96);    // 0.5 x 192
}

TEST(Schedule, LinearGrowsWithDepthOnBudget) {
  const auto m = base_model();
  const auto s = make_schedule(m, rule("linear"));
  EXPECT_EQ(total(s.widths), 192 * 8);
  for (size_t l = 1; l < s.widths.size(); ++l) EXPECT_GT(s.target[l], s.target[l - 1]);
  EXPECT_NEAR(s.target.back() / s.target.front(), 4.0 / 0.5, 1e-9);
}

TEST(Schedule, ScheduledConfigsKeepTheUniformParameterCount) {
  ffnshape::testing::TempDir dir;
  const auto profile_path = write_profile(dir, {5, 4, 3, 2.5, 2, 1, 1, 0.5});
  const auto profile = read_work_profile(profile_path);
  for (const auto& overrides : {std::vector<std::string>{},
                                std::vector<std::string>{"model.ffn.kind=hourglass", "model.ffn.k=3",
                                                         "model.ffn.hidden=48"}}) {
    const auto m = base_model(overrides);
    const auto uniform = count_parameters(m).total();
    for (const auto* name : {"uniform", "cosine", "linear", "topo:hyperbolic", "gw:spherical", "shift:raw", "anti"}) {
      const auto s = make_schedule(m, rule(name, profile_path), &profile);
      auto scheduled = m;
      scheduled.ffn.widths = s.widths;
      validate(scheduled);
      const auto count = count_parameters(scheduled).total();
      EXPECT_LE(std::abs(static_cast<double>(count - uniform)) / static_cast<double>(uniform), 1e-5) << name;
      EXPECT_EQ(count, uniform) << name;  // every layer costs the same per unit width: the sum is exact
    }
  }
}

TEST(Schedule, GeometryRuleFollowsTheWorkAndAntiReversesIt) {
  ffnshape::testing::TempDir dir;
  const auto path = write_profile(dir, {8, 6, 5, 4, 3, 2, 1.5, 1});
  const auto profile = read_work_profile(path);
  const auto m = base_model();
  auto settings = rule("topo:hyperbolic", path);
  const auto s = make_schedule(m, settings, &profile);
  for (size_t l = 1; l < s.widths.size(); ++l) EXPECT_LE(s.widths[l], s.widths[l - 1]);
  EXPECT_GT(s.widths.front(), 192);
  EXPECT_LT(s.widths.back(), 192);
  for (auto w : s.widths) {
    EXPECT_GE(w, 48);   // w_min 0.25 x 192
    EXPECT_LE(w, 768);  // w_max 4 x 192
  }
  settings.rule = "anti:topo:hyperbolic";
  auto anti = make_schedule(m, settings, &profile);
  std::reverse(anti.widths.begin(), anti.widths.end());
  EXPECT_EQ(anti.widths, s.widths);
  settings.rule = "anti";  // the default control reverses topo:hyperbolic
  EXPECT_EQ(make_schedule(m, settings, &profile).widths, make_schedule(m, rule("anti:topo:hyperbolic", path), &profile).widths);
}

TEST(Schedule, BadRulesAndProfilesAreConfigErrors) {
  ffnshape::testing::TempDir dir;
  const auto m = base_model();
  EXPECT_THROW(make_schedule(m, rule("triangle")), ConfigError);
  EXPECT_THROW(make_schedule(m, rule("topo:cubic")), ConfigError);
  EXPECT_THROW(make_schedule(m, rule("topo:hyperbolic")), ConfigError);  // no profile
  const auto shallow = read_work_profile(write_profile(dir, {1, 2, 3}));
  try {
    make_schedule(m, rule("topo:hyperbolic", "p.json"), &shallow);
    FAIL() << "a profile of another depth was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("3 layers"), std::string::npos) << e.what();
  }
  const auto nan_profile = read_work_profile(write_profile(dir, {1, 2, NAN, 1, 1, 1, 1, 1}));
  EXPECT_THROW(make_schedule(m, rule("gw:spherical", "p.json"), &nan_profile), ConfigError);
  EXPECT_THROW(read_work_profile(dir.file("missing.json")), ConfigError);
  std::ofstream(dir.file("junk.json")) << "{not json";
  EXPECT_THROW(read_work_profile(dir.file("junk.json")), ConfigError);
  // A layer count past int64 parses as a double (a fuzzing finding: casting it back was undefined).
  for (const char* n_layers : {"411111111110000026021", "2.5", "0", "-3", "\"8\""}) {
    std::ofstream(dir.file("count.json")) << R"({"format": "ffnshape-profile", "n_layers": )" << n_layers
                                          << R"(, "layers": []})";
    try {
      read_work_profile(dir.file("count.json"));
      FAIL() << "n_layers " << n_layers << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("n_layers that is not a positive integer"), std::string::npos) << e.what();
    }
  }
}

TEST(Schedule, GeometryWidthsDoNotDependOnTheUnitOfWidth) {
  // Different exponents per layer (intrinsic dimensions 2..40): the relative widths must be the same
  // for a narrow and a ten times wider uniform model.
  ffnshape::testing::TempDir dir;
  std::ofstream out(dir.file("profile.json"));
  out << R"({"format": "ffnshape-profile", "n_layers": 4, "layers": [)";
  const double work[] = {4, 3, 2, 1}, d_int[] = {2, 5, 10, 40};
  for (int l = 0; l < 4; ++l) {
    out << (l ? "," : "") << R"({"work": {"topo": {"hyperbolic": )" << work[l] << R"(}}, "intrinsic_dimension": {"in": )"
        << d_int[l] << "}}";
  }
  out << "]}";
  out.close();
  const auto profile = read_work_profile(dir.file("profile.json"));
  auto narrow = base_model({"model.n_layers=4", "model.ffn.multiple_of=1", "model.ffn.hidden=100"});
  auto wide = base_model({"model.n_layers=4", "model.ffn.multiple_of=1", "model.ffn.hidden=1000"});
  const auto a = make_schedule(narrow, rule("topo:hyperbolic", "p"), &profile);
  const auto b = make_schedule(wide, rule("topo:hyperbolic", "p"), &profile);
  for (size_t l = 0; l < 4; ++l) EXPECT_NEAR(a.target[l] / 100.0, b.target[l] / 1000.0, 1e-9);
  // The work falls with depth and so do the widths, whatever the exponents.
  for (size_t l = 1; l < 4; ++l) EXPECT_LT(b.target[l], b.target[l - 1]);
}

TEST(ScheduleConfig, ResolvesFromTheConfigAndRoundTripsAsWidths) {
  ffnshape::testing::TempDir dir;
  const auto path = write_profile(dir, {8, 6, 5, 4, 3, 2, 1.5, 1});
  auto config = load_run_config_from_string(kBase, {"model.ffn.schedule.rule=topo:hyperbolic",
                                                    "model.ffn.schedule.profile=" + path});
  EXPECT_THROW(config.model.ffn_hidden(0), ConfigError);  // not resolved yet
  EXPECT_EQ(count_parameters(config.model).total(), count_parameters(base_model()).total());
  resolve_schedule(config.model);
  const auto profile = read_work_profile(path);
  EXPECT_EQ(config.model.ffn.widths, make_schedule(base_model(), rule("topo:hyperbolic", path), &profile).widths);
  const auto reloaded = load_run_config_from_string(to_yaml(config)).model;
  EXPECT_EQ(reloaded.ffn.widths, config.model.ffn.widths);
  EXPECT_FALSE(reloaded.ffn.schedule.has_value());

  // A schedule file written by `ffnshape schedule` gives the same widths.
  const auto s = make_schedule(base_model(), rule("cosine"));
  write_schedule_file(dir.file("widths.json"), s, base_model(), rule("cosine"));
  auto from_file = load_run_config_from_string(kBase, {"model.ffn.schedule.file=" + dir.file("widths.json")}).model;
  resolve_schedule(from_file);
  EXPECT_EQ(from_file.ffn.widths, s.widths);

  // An unresolved schedule survives to_yaml as settings.
  auto unresolved = load_run_config_from_string(kBase, {"model.ffn.schedule.rule=cosine", "model.ffn.schedule.start=2"});
  const auto again = load_run_config_from_string(to_yaml(unresolved)).model;
  ASSERT_TRUE(again.ffn.schedule.has_value());
  EXPECT_EQ(again.ffn.schedule->rule, "cosine");
  EXPECT_DOUBLE_EQ(again.ffn.schedule->start, 2.0);
}

TEST(ScheduleConfig, BadSettingsNameTheirKey) {
  auto expect_error = [](const std::vector<std::string>& overrides, const std::string& key) {
    try {
      load_run_config_from_string(kBase, overrides);
      FAIL() << "accepted: " << overrides.back();
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  expect_error({"model.ffn.schedule.rule=zigzag"}, "model.ffn.schedule.rule");
  expect_error({"model.ffn.schedule.rule=topo:hyperbolic"}, "model.ffn.schedule.profile");
  expect_error({"model.ffn.schedule.rule=cosine", "model.ffn.schedule.smoothing=2"}, "model.ffn.schedule.smoothing");
  expect_error({"model.ffn.schedule.rule=cosine", "model.ffn.schedule.lambda=[1, 2]"}, "model.ffn.schedule.lambda");
  expect_error({"model.ffn.schedule.rule=cosine", "model.ffn.schedule.colour=red"}, "colour");
  expect_error({"model.ffn.schedule.rule=cosine", "model.ffn.widths=[8, 8, 8, 8, 8, 8, 8, 8]"}, "model.ffn.schedule");
  expect_error({"model.ffn.schedule.rule=cosine", "model.ffn.schedule.file=w.json"}, "model.ffn.schedule.rule");
}

namespace {

WorkProfile in_memory_profile(const std::string& name, const std::vector<double>& work, double d_int) {
  WorkProfile p;
  p.source = name;
  p.n_layers = static_cast<int64_t>(work.size());
  p.work["topo:hyperbolic"] = work;
  p.intrinsic_dimension.assign(work.size(), d_int);
  return p;
}

}  // namespace

TEST(ProfilePool, PoolsEachProfilesSharesOfItsTotal) {
  // Shares 0.1 0.2 0.3 0.4 and 0.4 0.4 0.1 0.1 (the second profile is twice as large overall).
  const auto a = in_memory_profile("a.json", {1, 2, 3, 4}, 10);
  const auto b = in_memory_profile("b.json", {8, 8, 2, 2}, 20);
  const auto pooled = pool_profiles({a, b});
  const std::vector<double> expected{0.25, 0.3, 0.2, 0.25};
  for (size_t l = 0; l < 4; ++l) EXPECT_NEAR(pooled.profile.work.at("topo:hyperbolic")[l], expected[l], 1e-12);
  const auto& layer0 = pooled.work.at("topo:hyperbolic")[0];
  EXPECT_NEAR(layer0.mean, 0.25, 1e-12);
  EXPECT_NEAR(layer0.sd, std::sqrt(2 * 0.15 * 0.15), 1e-12);  // sample sd of 0.1 and 0.4
  EXPECT_DOUBLE_EQ(layer0.min, 0.1);
  EXPECT_DOUBLE_EQ(layer0.max, 0.4);
  EXPECT_DOUBLE_EQ(pooled.profile.intrinsic_dimension[2], 15);
  EXPECT_NEAR(pooled.intrinsic_dimension[2].sd, std::sqrt(50.0), 1e-12);
  EXPECT_EQ(pooled.sources, (std::vector<std::string>{"a.json", "b.json"}));
  // One value that could not be measured makes that layer, and so the rule, unusable.
  const auto pooled_nan = pool_profiles({a, in_memory_profile("c.json", {1, NAN, 1, 1}, 10)});
  EXPECT_FALSE(std::isfinite(pooled_nan.profile.work.at("topo:hyperbolic")[1]));
}

TEST(ProfilePool, ProfilesOfAnotherDepthOrOtherStatisticsAreRefused) {
  const auto a = in_memory_profile("a.json", {1, 2, 3, 4}, 10);
  EXPECT_THROW(pool_profiles({a, in_memory_profile("b.json", {1, 2, 3}, 10)}), ConfigError);
  auto other = a;
  other.work = {{"gw:spherical", {1, 2, 3, 4}}};
  EXPECT_THROW(pool_profiles({a, other}), ConfigError);
  EXPECT_THROW(pool_profiles({}), ConfigError);
}

TEST(ProfilePool, WidthsOfThePoolAndOfEachProfile) {
  const auto m = base_model({"model.n_layers=4", "model.ffn.multiple_of=16"});
  const auto settings = rule("topo:hyperbolic", "pooled.json");
  const auto a = in_memory_profile("a.json", {1, 2, 3, 4}, 10);
  const auto b = in_memory_profile("b.json", {8, 8, 2, 2}, 20);
  // A profile and the same profile seven times larger give the same widths: no spread.
  auto a7 = a;
  for (auto& w : a7.work["topo:hyperbolic"]) w *= 7;
  const auto same = width_spread(m, settings, pool_profiles({a, a7}), {a, a7});
  EXPECT_EQ(same.pooled, make_schedule(m, settings, &a).widths);
  EXPECT_EQ(same.largest_change(), 0);

  const auto spread = width_spread(m, settings, pool_profiles({a, b}), {a, b});
  // The pool's widths are those of the hand-pooled profile: shares 0.25 0.3 0.2 0.25, dimension 15.
  const auto hand = in_memory_profile("hand.json", {0.25, 0.3, 0.2, 0.25}, 15);
  EXPECT_EQ(spread.pooled, make_schedule(m, settings, &hand).widths);
  ASSERT_EQ(spread.single.size(), 2u);
  EXPECT_EQ(spread.single[0], make_schedule(m, settings, &a).widths);
  EXPECT_EQ(spread.single[1], make_schedule(m, settings, &b).widths);
  int64_t largest = 0;
  for (size_t l = 0; l < 4; ++l) {
    EXPECT_EQ(spread.low[l], std::min(spread.single[0][l], spread.single[1][l]));
    EXPECT_EQ(spread.high[l], std::max(spread.single[0][l], spread.single[1][l]));
    largest = std::max(largest, std::abs(spread.single[0][l] - spread.single[1][l]) / 16);
  }
  EXPECT_GT(largest, 0);  // a rising and a falling profile do not agree
  EXPECT_EQ(spread.largest_change(), largest);
}

TEST(ProfilePool, WrittenPoolReadsBackAsAProfile) {
  ffnshape::testing::TempDir dir;
  const auto pooled = pool_profiles({in_memory_profile("a.json", {1, 2, 3, 4}, 10), in_memory_profile("b.json", {8, 8, 2, 2}, 20)});
  write_pooled_profile(dir.file("pooled.json"), pooled);
  const auto again = read_work_profile(dir.file("pooled.json"));
  EXPECT_EQ(again.n_layers, 4);
  for (size_t l = 0; l < 4; ++l) {
    EXPECT_NEAR(again.work.at("topo:hyperbolic")[l], pooled.profile.work.at("topo:hyperbolic")[l], 1e-12);
    EXPECT_NEAR(again.intrinsic_dimension[l], 15, 1e-12);
  }
  const auto j = nlohmann::json::parse(std::ifstream(dir.file("pooled.json")));
  EXPECT_EQ(j["pooled"]["profiles"].size(), 2u);
  EXPECT_NEAR(j["layers"][0]["work_spread"]["topo"]["hyperbolic"]["max"].get<double>(), 0.4, 1e-12);
}
