// Experiments: the interval arithmetic of the report on numbers computed with scipy, and planning
// arms on one budget.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "ffnshape/experiment/experiment.h"
#include "ffnshape/experiment/report.h"
#include "temp_dir.h"

using namespace ffnshape;
using namespace ffnshape::experiment;

TEST(ExperimentReport, StudentQuantilesMatchScipy) {
  EXPECT_NEAR(student_t_975(1), 12.706204736432, 1e-9);
  EXPECT_NEAR(student_t_975(2), 4.302652729911, 1e-9);
  EXPECT_NEAR(student_t_975(30), 2.042272456301, 1e-9);
  EXPECT_NEAR(student_t_975(40), 2.0210753829953374, 1e-4);   // scipy.stats.t.ppf(0.975, 40)
  EXPECT_NEAR(student_t_975(100), 1.9839715184496334, 1e-4);
  EXPECT_TRUE(std::isnan(student_t_975(0)));
}

TEST(ExperimentReport, SeedsForPowerAreScipysExactNoncentralTCounts) {
  // The smallest n with P(|T| > t(0.975, n-1)) >= 0.8 for T ~ nct(n - 1, effect * sqrt(n)), by
  // scipy.stats.nct: effect 0.5 -> 34, 0.971 -> 11, 1.5 -> 6, 2.5 -> 4, 4 -> 3; 0.3 -> 90, which the
  // normal approximation puts at 89 (within one seed, as documented).
  EXPECT_EQ(seeds_for_power(0.05, 0.1), 34);
  EXPECT_EQ(seeds_for_power(-0.0371, 0.0371 / 0.971), 11);
  EXPECT_EQ(seeds_for_power(0.15, 0.1), 6);
  EXPECT_EQ(seeds_for_power(0.25, 0.1), 4);
  EXPECT_EQ(seeds_for_power(0.4, 0.1), 3);
  EXPECT_NEAR(static_cast<double>(seeds_for_power(0.03, 0.1)), 90.0, 1.0);
  EXPECT_EQ(seeds_for_power(0.0, 0.1), 0);
  EXPECT_EQ(seeds_for_power(0.1, 0.0), 0);
  EXPECT_EQ(seeds_for_power(NAN, 0.1), 0);
}

TEST(ExperimentReport, PairedIntervalUsesOnlySharedSeeds) {
  // Differences -0.1, -0.1, +0.1 (seed 4 has no partner): mean -1/30, sd 0.11547005383792516,
  // half-width t(0.975, 2) * sd / sqrt(3) = 0.28684351532741836 (scipy).
  const auto i = paired_interval({{1, 3.0}, {2, 3.2}, {3, 3.1}}, {{1, 3.1}, {2, 3.3}, {3, 3.0}, {4, 9.0}});
  EXPECT_EQ(i.n, 3);
  EXPECT_NEAR(i.mean, -0.03333333333333333, 1e-12);
  EXPECT_NEAR(i.sd, 0.11547005383792516, 1e-12);
  EXPECT_NEAR(i.half_width, 0.28684351532741836, 1e-9);
  const auto one = paired_interval({{1, 2.0}}, {{1, 1.5}});
  EXPECT_EQ(one.n, 1);
  EXPECT_DOUBLE_EQ(one.mean, 0.5);
  EXPECT_TRUE(std::isnan(one.half_width));
}

TEST(ExperimentPlan, ArmsAreSolvedToTheReferenceBudget) {
  ffnshape::testing::TempDir dir;
  std::ofstream(dir.file("base.yaml")) << "model: {vocab_size: 512, d_model: 128, n_layers: 4, n_heads: 4, ffn: {hidden: 344}}\n";
  std::ofstream(dir.file("exp.yaml")) << R"(
base: base.yaml
seeds: [3, 1]
budget: {reference: conventional, count: non_embedding}
arms:
  - name: conventional
  - name: hourglass
    set: [model.ffn.kind=hourglass, model.ffn.k=4, model.n_layers=2]
    solve: [d_model=64..512, ffn.hidden=8..512, head_dim=8..64]
  - name: taper
    schedule: cosine
)";
  const auto spec = load_experiment(dir.file("exp.yaml"));
  EXPECT_EQ(spec.name, "exp");
  EXPECT_EQ(spec.reference, "conventional");
  EXPECT_EQ(spec.seeds, (std::vector<int64_t>{3, 1}));
  const auto plans = plan_experiment(spec);
  ASSERT_EQ(plans.size(), 3u);
  const auto budget = counted_parameters(plans[0].config.model, BudgetCount::non_embedding);
  for (const auto& p : plans) {
    EXPECT_EQ(p.budget, budget);
    EXPECT_TRUE(p.within_tolerance) << p.spec.name << ": " << p.explanation;
    EXPECT_LE(std::abs(p.rel_error), 1e-5) << p.spec.name;
    EXPECT_EQ(p.params, counted_parameters(p.config.model, BudgetCount::non_embedding)) << p.spec.name;
  }
  EXPECT_EQ(plans[1].config.model.n_layers, 2);
  EXPECT_EQ(plans[1].config.model.ffn.k, 4);
  EXPECT_EQ(plans[1].dimensions.count("d_model"), 1u);
  EXPECT_EQ(run_dir("runs/x", "taper", 3), "runs/x/taper/seed-3");
}

TEST(ExperimentPlan, ProfileSectionCarriesThePersistenceSettings) {
  ffnshape::testing::TempDir dir;
  std::ofstream(dir.file("base.yaml")) << "model: {vocab_size: 512, d_model: 128, n_layers: 4, n_heads: 4, ffn: {hidden: 344}}\n";
  const auto experiment = [&](const std::string& profile) {
    std::ofstream(dir.file("exp.yaml")) << "base: base.yaml\nbudget: {reference: uniform}\nprofile: " << profile
                                        << "\narms: [{name: uniform}, {name: topo, schedule: 'topo:hyperbolic'}]\n";
    return load_experiment(dir.file("exp.yaml"));
  };
  const auto defaults = experiment("{arm: uniform}").profile.value();
  EXPECT_EQ(defaults.ph_threshold, 1.0);
  EXPECT_EQ(defaults.ph_budget.memory_bytes, 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(defaults.ph_budget.seconds, 300.0);
  EXPECT_TRUE(std::isinf(defaults.topo_internal_p));
  const auto set =
      experiment("{arm: uniform, ph_threshold: 0.5, ph_memory: 0.25, ph_seconds: 20, topo_norm: l2}").profile.value();
  EXPECT_EQ(set.ph_threshold, 0.5);
  EXPECT_EQ(set.ph_budget.memory_bytes, 0.25 * 1024 * 1024 * 1024);
  EXPECT_EQ(set.ph_budget.seconds, 20.0);
  EXPECT_EQ(set.topo_internal_p, 2.0);
  for (const auto* bad : {"{arm: uniform, ph_threshold: 1.5}", "{arm: uniform, ph_memory: -1}",
                          "{arm: uniform, topo_norm: l3}", "{arm: uniform, ph_secs: 5}"}) {
    EXPECT_THROW(experiment(bad), std::exception) << bad;
  }
  // One profile by default (the first seed, one token sample); seeds and samples for a pool.
  EXPECT_EQ(defaults.seeds, std::vector<int64_t>{1});
  EXPECT_EQ(defaults.samples, 1);
  EXPECT_EQ(defaults.stable_multiples, 1);
  EXPECT_EQ(experiment("{arm: uniform, seed: 7}").profile->seeds, std::vector<int64_t>{7});
  const auto pooled = experiment("{arm: uniform, seeds: [100, 101, 102], samples: 3, stable_multiples: 2}").profile.value();
  EXPECT_EQ(pooled.seeds, (std::vector<int64_t>{100, 101, 102}));
  EXPECT_EQ(pooled.samples, 3);
  EXPECT_EQ(pooled.stable_multiples, 2);
  for (const auto* bad : {"{arm: uniform, seed: 1, seeds: [2]}", "{arm: uniform, seeds: []}",
                          "{arm: uniform, seeds: [3, 3]}", "{arm: uniform, samples: 0}",
                          "{arm: uniform, stable_multiples: -1}"}) {
    try {
      experiment(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("profile."), std::string::npos) << e.what();
    }
  }
}

TEST(ExperimentReport, HardwareAndWallTimeComeFromTheSessionsRecord) {
  ffnshape::testing::TempDir dir;
  std::ofstream(dir.file("base.yaml")) << "model: {vocab_size: 512, d_model: 128, n_layers: 4, n_heads: 4, ffn: {hidden: 344}}\n";
  std::ofstream(dir.file("exp.yaml")) << "base: base.yaml\nseeds: [1, 2]\nbudget: {reference: a}\narms: [{name: a}, {name: b}]\n";
  const auto spec = load_experiment(dir.file("exp.yaml"));
  const auto plans = plan_experiment(spec);
  const auto root = dir.file("runs");
  std::filesystem::create_directories(root);
  // Two sessions (30 + 40 min, 3 runs trained), a torn line and a wrong-typed one, which are skipped.
  std::ofstream(root + "/sessions.jsonl")
      << R"({"started":"2026-01-01T00:00:00Z","wall_s":1800,"host":"CPU X, 2 cores","parallel":1,"threads_per_run":2,"runs_trained":1})"
      << "\n{\"started\": \"2026-01-02\", \"wall_s\n"
      << R"({"started":"2026-01-03T00:00:00Z","wall_s":"long","host":"CPU Y","parallel":2,"threads_per_run":1,"runs_trained":9})"
      << "\n"
      << R"({"started":"2026-01-04T00:00:00Z","wall_s":2400,"host":"CPU X, 2 cores","parallel":2,"threads_per_run":1,"runs_trained":2})"
      << "\n";
  std::vector<RunRecord> records;
  for (const auto* arm : {"a", "b"}) {
    for (int64_t seed : {1, 2}) {
      RunRecord r;
      r.arm = arm;
      r.seed = seed;
      r.complete = true;
      r.val_loss = 4.0 + 0.01 * static_cast<double>(seed);
      r.wall_time_s = 1500;  // 4 runs: 100 min of their own
      records.push_back(r);
    }
  }
  const auto md = write_report(root, spec, plans, records);
  EXPECT_NE(md.find("- CPU X, 2 cores; one run at a time, 2 threads per run\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- CPU X, 2 cores; 2 runs side by side, 1 thread per run\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("CPU Y"), std::string::npos) << md;
  EXPECT_NE(md.find("wall time of the study: 1 h 10 min over 2 invocations that trained 3 runs; the finished runs' "
                    "own training time adds up to 1 h 40 min\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- 1 of the 4 finished runs were trained by invocations that left no record"), std::string::npos) << md;
}
