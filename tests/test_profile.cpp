// Profiling a trained model: the clouds, all nine work statistics, the perturbation diagnostics on
// cases with known answers, rank correlation on hand-computed values, and the profile file that
// schedules read.
#include <gtest/gtest.h>

#include <cmath>

#include "ffnshape/config/run_config.h"
#include "ffnshape/geometry/metrics.h"
#include "ffnshape/profile/work_profiler.h"
#include "ffnshape/schedule/schedule.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/loader.h"
#include "ffnshape/train/trainer.h"
#include "temp_dir.h"
#include "tiny_corpus.h"

using namespace ffnshape;
using ffnshape::testing::TempDir;
using ffnshape::testing::patterned_tokens;

namespace {

// A 3-layer model trained for a few steps on a patterned language.
TrainedModel tiny_trained(const TempDir& dir) {
  write_shard(dir.file("train_0.bin"), patterned_tokens(20000, 1), 64);
  write_shard(dir.file("val_0.bin"), patterned_tokens(4000, 2), 64);
  auto config = load_run_config_from_string(R"(
model: {vocab_size: 64, d_model: 32, n_layers: 3, n_heads: 4, max_seq_len: 32, ffn: {hidden: 64}}
train: {seq_len: 32, micro_batch: 4, steps: 20, seed: 3, threads: 1}
optimizer: {lr: 3.0e-3, warmup_steps: 2}
eval: {every: 100, batches: 1}
log: {every: 100}
)");
  config.data.train = dir.file("train_*.bin");
  config.data.val = dir.file("val_*.bin");
  TrainOptions o;
  o.run_dir = dir.file("run");
  o.quiet = true;
  o.install_signal_handlers = false;
  train(config, o);
  return load_trained_model(o.run_dir);
}

}  // namespace

TEST(Profile, TinyTrainedModelGivesFiniteWorkForAllNineStatistics) {
  TempDir dir;
  auto trained = tiny_trained(dir);
  const auto windows = validation_batches(dir.file("val_*.bin"), 32, 8, 1, 64).at(0).first;
  const auto val = validation_batches(dir.file("val_*.bin"), 32, 4, 2, 64);
  profile::ProfileOptions options;
  options.tokens = 96;
  options.perturbations = {profile::parse_perturbation("ablate"), profile::parse_perturbation("scale:0"),
                           profile::parse_perturbation("scale:1"), profile::parse_perturbation("noise:0.5")};
  options.additivity = true;
  const auto p = profile::profile_model(trained.model, windows, val, options);
  ASSERT_EQ(p.layers.size(), 3u);

  const auto clouds = profile::capture_clouds(trained.model, windows, 96, options.seed);
  for (size_t l = 0; l < 3; ++l) {
    const auto& layer = p.layers[l];
    for (const char* stat : {"shift", "gw", "topo"}) {
      for (const char* g : {"raw", "spherical", "hyperbolic"}) {
        const double v = layer.work.at(stat).at(g);
        EXPECT_TRUE(std::isfinite(v) && v >= 0) << stat << ":" << g << " at layer " << l << " is " << v;
      }
    }
    // Raw shift is the mean Euclidean distance between corresponding tokens of the same clouds.
    const double shift = (clouds.y[l] - clouds.x[l]).to(torch::kDouble).norm(2, 1).mean().item<double>();
    EXPECT_NEAR(layer.work.at("shift").at("raw"), shift, 1e-9 * shift);
    EXPECT_NEAR(layer.residual_norm_in, clouds.x[l].to(torch::kDouble).norm(2, 1).mean().item<double>(), 1e-9);
    EXPECT_TRUE(std::isfinite(layer.intrinsic_dimension_in) && layer.intrinsic_dimension_in > 0);
    // Scaling the update by 0 is ablation; by 1 it changes nothing.
    EXPECT_NEAR(layer.sensitivity.at("scale:0"), layer.sensitivity.at("ablate"), 1e-6);
    EXPECT_NEAR(layer.sensitivity.at("scale:1"), 0.0, 1e-6);
    EXPECT_TRUE(std::isfinite(layer.sensitivity.at("noise:0.5")));
  }
  EXPECT_EQ(p.additivity.size(), 2u * 4u);  // 2 adjacent pairs x 4 perturbations
  for (const auto& a : p.additivity) {
    EXPECT_TRUE(std::isfinite(a.joint));
    if (a.perturbation == "scale:1") EXPECT_NEAR(a.joint, 0.0, 1e-6);
  }
  EXPECT_EQ(p.spearman.size(), 9u * 4u);

  // The file round-trips into a schedule for a model of the same depth.
  profile::write_profile_json(dir.file("profile.json"), p, options, {{"checkpoint", trained.checkpoint}});
  const auto work = schedule::read_work_profile(dir.file("profile.json"));
  EXPECT_EQ(work.n_layers, 3);
  EXPECT_DOUBLE_EQ(work.work_of("topo:hyperbolic")[1], p.layers[1].work.at("topo").at("hyperbolic"));
  ScheduleConfig settings;
  settings.rule = "topo:hyperbolic";
  const auto s = schedule::make_schedule(trained.config.model, settings, &work);
  EXPECT_EQ(s.widths.size(), 3u);
}

TEST(Profile, SamplesAreSeededAndBadRequestsAreErrors) {
  TempDir dir;
  auto trained = tiny_trained(dir);
  const auto windows = validation_batches(dir.file("val_*.bin"), 32, 4, 1, 64).at(0).first;
  const auto a = profile::capture_clouds(trained.model, windows, 50, 1);
  const auto b = profile::capture_clouds(trained.model, windows, 50, 1);
  const auto c = profile::capture_clouds(trained.model, windows, 50, 2);
  EXPECT_TRUE(torch::equal(a.x[0], b.x[0]));
  EXPECT_FALSE(torch::equal(a.x[0], c.x[0]));
  EXPECT_THROW(profile::capture_clouds(trained.model, windows, 4 * 32 + 1, 1), ConfigError);  // more than exist
  EXPECT_THROW(profile::capture_clouds(trained.model, windows, 2, 1), ConfigError);
  EXPECT_THROW(profile::parse_perturbation("scale"), ConfigError);
  EXPECT_THROW(profile::parse_perturbation("noise:-1"), ConfigError);
  EXPECT_THROW(profile::parse_perturbation("shuffle:1"), ConfigError);
  EXPECT_EQ(profile::parse_perturbation("scale:0.5").name(), "scale:0.5");
}

TEST(Profile, TextThatRepeatsRunsToTheEnd) {
  // Validation text that repeats one 33-token sequence: every window is the same, so the sampled tokens
  // repeat and the clouds hold many copies of the same states (as repeated text does in real data).
  TempDir dir;
  auto trained = tiny_trained(dir);
  const auto sequence = patterned_tokens(33, 5);
  std::vector<uint32_t> text;
  for (int copy = 0; copy < 40; ++copy) text.insert(text.end(), sequence.begin(), sequence.end());
  write_shard(dir.file("repeat_0.bin"), text, 64);
  const auto windows = validation_batches(dir.file("repeat_*.bin"), 32, 8, 1, 64).at(0).first;
  profile::ProfileOptions options;
  options.tokens = 96;
  const auto clouds = profile::capture_clouds(trained.model, windows, options.tokens, options.seed);
  const auto distinct = std::get<0>(torch::unique_dim(clouds.x[1], 0)).size(0);
  EXPECT_LE(distinct, 32) << "the clouds should repeat states";
  const auto p = profile::profile_model(trained.model, windows, {}, options);
  ASSERT_EQ(p.layers.size(), 3u);
  for (size_t l = 0; l < 3; ++l) {
    for (const char* stat : {"shift", "gw", "topo"}) {
      for (const char* g : {"raw", "spherical", "hyperbolic"}) {
        const double v = p.layers[l].work.at(stat).at(g);
        EXPECT_TRUE(std::isfinite(v) && v >= 0) << stat << ":" << g << " at layer " << l << " is " << v;
      }
    }
  }
}

TEST(Profile, PersistenceBudgetStopsNamingTheLayer) {
  TempDir dir;
  auto trained = tiny_trained(dir);
  const auto windows = validation_batches(dir.file("val_*.bin"), 32, 8, 1, 64).at(0).first;
  profile::ProfileOptions options;
  options.tokens = 200;
  options.statistics = {"topo"};
  options.geometries = {geometry::Geometry::spherical};
  options.ph_budget = {1024.0, 0.0};  // 1 KiB: no diagram fits
  options.threads = 1;
  try {
    profile::profile_model(trained.model, windows, {}, options);
    ADD_FAILURE() << "no budget error";
  } catch (const geometry::PersistenceBudgetExceeded& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("layer 0, spherical geometry, X (entering the FFN): Rips persistence (H1) of 200 points"),
              std::string::npos) << message;
    EXPECT_NE(message.find("fix: fewer tokens (--tokens, now 200), a Rips threshold (--ph-threshold"), std::string::npos)
        << message;
  }
}

TEST(Profile, SpearmanOnHandComputedRanks) {
  EXPECT_DOUBLE_EQ(profile::spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(profile::spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ties take mean ranks: a -> (1, 2.5, 2.5, 4), b -> (1, 3, 2, 4); rho = 4.5 / sqrt(4.5 * 5).
  EXPECT_NEAR(profile::spearman({1, 2, 2, 3}, {1, 3, 2, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_TRUE(std::isnan(profile::spearman({1, 1, 1}, {1, 2, 3})));
}
