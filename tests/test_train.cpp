// The trainer: LR schedules, gradient accumulation, exact resume, learning on tiny data, bf16, and
// stops on a non-finite loss.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ffnshape/compat.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/data_error.h"
#include "ffnshape/train/device.h"
#include "ffnshape/train/loader.h"
#include "ffnshape/train/lr_schedule.h"
#include "ffnshape/train/optimizer.h"
#include "ffnshape/train/trainer.h"
#include "quiet_training.h"
#include "temp_dir.h"
#include "tiny_corpus.h"

namespace fs = std::filesystem;
using namespace ffnshape;

namespace {

using ffnshape::testing::TempDir;
using ffnshape::testing::patterned_tokens;
using ffnshape::testing::quiet;

RunConfig tiny_run(const TempDir& dir) {
  write_shard(dir.file("train_0.bin"), patterned_tokens(20000, 1), 64);
  write_shard(dir.file("val_0.bin"), patterned_tokens(4000, 2), 64);
  auto config = load_run_config_from_string(R"(
model: {vocab_size: 64, d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 32,
        ffn: {kind: hourglass, k: 2, hidden: 16}}
train: {seq_len: 32, micro_batch: 4, grad_accum: 2, steps: 8, seed: 3, threads: 1}
optimizer: {lr: 3.0e-3, min_lr: 3.0e-4, warmup_steps: 2}
eval: {every: 4, batches: 2}
checkpoint: {every: 100, keep: 3}
log: {every: 1}
)");
  config.data.train = dir.file("train_*.bin");
  config.data.val = dir.file("val_*.bin");
  return config;
}

}  // namespace

TEST(LrSchedule, WarmupThenDecayToMinimum) {
  OptimizerConfig c;
  c.lr = 1.0;
  c.min_lr = 0.1;
  c.warmup_steps = 10;
  EXPECT_DOUBLE_EQ(learning_rate(c, 0, 110), 0.1);  // (0 + 1) / 10
  EXPECT_DOUBLE_EQ(learning_rate(c, 9, 110), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate(c, 10, 110), 1.0);
  EXPECT_NEAR(learning_rate(c, 60, 110), 0.55, 1e-12);  // cosine midpoint: (lr + min) / 2
  EXPECT_NEAR(learning_rate(c, 110, 110), 0.1, 1e-12);
  c.schedule = LrSchedule::linear;
  EXPECT_NEAR(learning_rate(c, 35, 110), 1.0 - 0.9 * 0.25, 1e-12);
  c.schedule = LrSchedule::constant;
  EXPECT_DOUBLE_EQ(learning_rate(c, 100, 110), 1.0);
  c.schedule = LrSchedule::wsd;
  c.decay_fraction = 0.2;  // decay over steps 88..110
  EXPECT_DOUBLE_EQ(learning_rate(c, 87, 110), 1.0);
  EXPECT_NEAR(learning_rate(c, 99, 110), 1.0 - 0.9 * 0.5, 1e-12);
}

TEST(Optimizer, NoWeightDecayOnNormsAndEmbeddings) {
  TempDir dir;
  const auto config = tiny_run(dir);
  nn::TransformerLM model(config.model);
  auto optimizer = make_optimizer(model, config.optimizer);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  const auto& decayed = optimizer->param_groups()[0];
  const auto& undecayed = optimizer->param_groups()[1];
  EXPECT_DOUBLE_EQ(static_cast<const torch::optim::AdamWOptions&>(decayed.options()).weight_decay(), 0.1);
  EXPECT_DOUBLE_EQ(static_cast<const torch::optim::AdamWOptions&>(undecayed.options()).weight_decay(), 0.0);
  for (const auto& p : decayed.params()) EXPECT_EQ(p.dim(), 2);
  bool has_embedding = false;
  for (const auto& p : undecayed.params()) has_embedding |= p.is_same(model->tok_embeddings->weight);
  EXPECT_TRUE(has_embedding);
  EXPECT_EQ(decayed.params().size() + undecayed.params().size(), model->parameters().size());
}

TEST(Trainer, AccumulationEqualsOneLargeBatch) {
  TempDir dir;
  const auto config = tiny_run(dir);
  torch::manual_seed(0);
  nn::TransformerLM model(config.model);
  auto x = torch::randint(0, 64, {4, 16}, torch::kLong);
  auto y = torch::randint(0, 64, {4, 16}, torch::kLong);
  y[0].narrow(0, 0, 9).fill_(-1);  // uneven real token counts between the micro-batches
  const auto device = torch::Device(torch::kCPU);
  const double big = accumulate_gradients(model, {{x, y}}, device, Precision::fp32);
  std::vector<torch::Tensor> expected;
  for (const auto& p : model->parameters()) expected.push_back(p.grad().clone());
  model->zero_grad();
  const double split = accumulate_gradients(model, {{x.narrow(0, 0, 2), y.narrow(0, 0, 2)}, {x.narrow(0, 2, 2), y.narrow(0, 2, 2)}},
                                            device, Precision::fp32);
  EXPECT_NEAR(big, split, 1e-6);
  const auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::allclose(params[i].grad(), expected[i], 1e-5, 1e-7)) << i;
}

TEST(Trainer, ResumeIsBitExact) {
  TempDir dir;
  auto config = tiny_run(dir);
  const auto straight = train(config, quiet(dir.file("straight")));
  ASSERT_EQ(straight.steps_done, 8);

  auto first = quiet(dir.file("resumed"));
  first.stop_at_step = 4;
  const auto half = train(config, first);
  EXPECT_TRUE(half.interrupted);
  EXPECT_EQ(half.steps_done, 4);
  ASSERT_TRUE(latest_checkpoint(dir.file("resumed")).has_value());
  const auto rest = train(config, quiet(dir.file("resumed")));
  EXPECT_EQ(rest.steps_done, 8);
  ASSERT_EQ(rest.losses.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(rest.losses[i], straight.losses[4 + i]) << "step " << 5 + i;
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(half.losses[i], straight.losses[i]);
  EXPECT_EQ(rest.val_loss, straight.val_loss);

  nn::TransformerLM a(config.model), b(config.model);
  load_checkpoint(*latest_checkpoint(dir.file("straight")), a, nullptr, torch::kCPU);
  load_checkpoint(*latest_checkpoint(dir.file("resumed")), b, nullptr, torch::kCPU);
  const auto pa = a->named_parameters();
  for (const auto& p : b->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), pa[p.key()])) << p.key();
}

TEST(InitFrom, StartsFromTheSourceWeightsAtStepZero) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.train.steps = 60;  // long enough to learn the pattern: the source's loss ends far below a fresh model's
  const auto source = train(config, quiet(dir.file("source")));
  const auto fresh = train(config, quiet(dir.file("fresh")));
  ASSERT_LT(source.final_loss, fresh.losses.front() - 1.0);

  auto continued = config;
  continued.train.init_from = dir.file("source");
  continued.train.steps = 2;
  continued.optimizer.lr = continued.optimizer.min_lr = 0;  // no update: the weights must stay the source's
  const auto result = train(continued, quiet(dir.file("continued")));
  EXPECT_EQ(result.steps_done, 2);  // a new run: step 0, not the source's step 8
  EXPECT_LT(result.losses.front(), fresh.losses.front() - 1.0);  // trained weights, not a fresh init

  nn::TransformerLM a(config.model), b(config.model);
  load_checkpoint(*latest_checkpoint(dir.file("source")), a, nullptr, torch::kCPU);
  load_checkpoint(*latest_checkpoint(dir.file("continued")), b, nullptr, torch::kCPU);
  const auto pa = a->named_parameters();
  for (const auto& p : b->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), pa[p.key()])) << p.key();
}

TEST(InitFrom, NamesEveryTensorOfAnotherShape) {
  TempDir dir;
  auto config = tiny_run(dir);
  train(config, quiet(dir.file("source")));
  auto wider = config;
  wider.model.ffn.hidden = 24;
  nn::TransformerLM model(wider.model);
  try {
    initialise_from(dir.file("source"), model);
    FAIL() << "a model of another shape took the weights";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("checkpoint [16, 32], this model [24, 32]"), std::string::npos) << message;
    EXPECT_NE(message.find("config.yaml"), std::string::npos) << message;
  }
  EXPECT_THROW(initialise_from(dir.file("no_such_run"), model), DataError);
}

TEST(Trainer, OverfitsATinyBatch) {
  TempDir dir;
  auto config = tiny_run(dir);
  write_shard(dir.file("one_window.bin"), patterned_tokens(33, 5), 64);  // exactly one window of 32 + 1
  config.data.train = dir.file("one_window.bin");
  config.data.val.clear();
  config.train.steps = 150;
  config.train.grad_accum = 1;
  config.optimizer.weight_decay = 0;
  config.optimizer.min_lr = config.optimizer.lr;
  const auto result = train(config, quiet(dir.file("overfit")));
  EXPECT_GT(result.losses.front(), 3.5);  // about log(64) at the start
  EXPECT_LT(result.final_loss, 0.1);
}

TEST(Trainer, Bf16TrainsAndLossFalls) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.train.precision = Precision::bf16;
  config.train.steps = 40;
  const auto result = train(config, quiet(dir.file("bf16")));
  EXPECT_TRUE(std::isfinite(result.final_loss));
  EXPECT_LT(result.final_loss, result.losses.front() - 0.5);
  EXPECT_LT(result.val_loss, std::log(64.0) - 0.5);
}

TEST(Trainer, Bf16AutocastComputesInBf16WithAnFp32Loss) {
  TempDir dir;
  const auto config = tiny_run(dir);
  nn::TransformerLM model(config.model);
  const auto idx = torch::randint(0, 64, {2, 8}, torch::kLong);
  compat::AutocastGuard autocast(torch::kCPU, torch::kBFloat16);
  const auto out = model->forward_with_loss(idx, idx);
  EXPECT_EQ(out.logits.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(out.loss.scalar_type(), torch::kFloat);
  EXPECT_EQ(model->tok_embeddings->weight.scalar_type(), torch::kFloat);  // fp32 master weights
}

TEST(Trainer, StopsOnNonFiniteLossKeepingTheLastCheckpoint) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.checkpoint.every = 2;
  config.train.steps = 6;
  train(config, quiet(dir.file("run")));
  const auto good = latest_checkpoint(dir.file("run"));
  ASSERT_TRUE(good.has_value());
  // The same run, continued with a learning rate that blows the weights up.
  config.train.steps = 12;
  config.optimizer.lr = 1e12;
  config.optimizer.min_lr = 1e12;
  config.optimizer.clip = 0;
  EXPECT_THROW(train(config, quiet(dir.file("run"))), NonFiniteLoss);
  EXPECT_TRUE(is_complete_checkpoint(*latest_checkpoint(dir.file("run"))));
}

TEST(Trainer, RefusesToOverwriteARunWithResumeNever) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.train.steps = 2;
  train(config, quiet(dir.file("run")));
  auto options = quiet(dir.file("run"));
  options.resume = "never";
  EXPECT_THROW(train(config, options), ConfigError);
}

// --- features that matter on GPUs, checked on the CPU ---------------------------------------------

namespace {

// Loss and every parameter's gradient of one forward and backward pass.
std::pair<double, std::vector<torch::Tensor>> loss_and_gradients(nn::TransformerLM& model, const torch::Tensor& x,
                                                                  const torch::Tensor& y, bool bf16) {
  model->zero_grad();
  const double loss = accumulate_gradients(model, {{x, y}}, torch::kCPU, bf16 ? Precision::bf16 : Precision::fp32);
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad().clone());
  return {loss, grads};
}

}  // namespace

TEST(ActivationCheckpointing, SameLossAndGradientsAsStoredActivations) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.model.family = Family::olmo2;  // QK-norm and post-norms go through the recomputation too
  config.model.qk_norm = true;
  torch::manual_seed(5);
  nn::TransformerLM model(config.model);
  const auto x = torch::randint(0, 64, {3, 16}, torch::kLong), y = torch::randint(0, 64, {3, 16}, torch::kLong);
  model->set_activation_checkpointing(false);
  const auto [stored_loss, stored] = loss_and_gradients(model, x, y, /*bf16=*/false);
  model->set_activation_checkpointing(true);
  const auto [recomputed_loss, recomputed] = loss_and_gradients(model, x, y, /*bf16=*/false);
  EXPECT_DOUBLE_EQ(stored_loss, recomputed_loss);
  ASSERT_EQ(stored.size(), recomputed.size());
  // The same operations: equal up to the order in which the residual stream's gradients add up.
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_TRUE(torch::allclose(stored[i], recomputed[i], 1e-5, 1e-7)) << "parameter " << i;
  }
}

// Under bf16 autocast the recomputation must run in bf16 as the forward did. With one block the
// gradient reaching it is the same in both ways, so its weights' gradients agree to fp32 rounding;
// with more blocks a different summation order of the residual gradients flips bf16 roundings
// downstream (differences of a few bf16 ulps), which would hide the check.
TEST(ActivationCheckpointing, RecomputesUnderTheForwardsAutocast) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.model.n_layers = 1;
  torch::manual_seed(6);
  nn::TransformerLM model(config.model);
  const auto x = torch::randint(0, 64, {3, 16}, torch::kLong), y = torch::randint(0, 64, {3, 16}, torch::kLong);
  model->set_activation_checkpointing(false);
  const auto [stored_loss, stored] = loss_and_gradients(model, x, y, /*bf16=*/true);
  model->set_activation_checkpointing(true);
  const auto [recomputed_loss, recomputed] = loss_and_gradients(model, x, y, /*bf16=*/true);
  EXPECT_DOUBLE_EQ(stored_loss, recomputed_loss);
  const auto names = model->named_parameters().keys();
  for (size_t i = 0; i < stored.size(); ++i) {
    if (names[i].rfind("blocks.", 0) != 0) continue;
    EXPECT_TRUE(torch::allclose(stored[i], recomputed[i], 1e-5, 1e-7))
        << names[i] << " max diff " << (stored[i] - recomputed[i]).abs().max().item<double>();
  }
}

TEST(ActivationCheckpointing, TrainingRunMatchesThePlainRun) {
  TempDir dir;
  auto config = tiny_run(dir);
  const auto plain = train(config, quiet(dir.file("plain")));
  config.train.activation_checkpointing = true;
  const auto recomputed = train(config, quiet(dir.file("recomputed")));
  ASSERT_EQ(plain.losses.size(), recomputed.losses.size());
  for (size_t i = 0; i < plain.losses.size(); ++i) EXPECT_NEAR(plain.losses[i], recomputed.losses[i], 1e-5) << i;
}

TEST(FusedAdamW, MatchesPerTensorAdamWAndSharesItsCheckpoints) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.optimizer.weight_decay = 0.1;
  torch::manual_seed(7);
  nn::TransformerLM reference(config.model), fused_model(config.model);
  {
    torch::NoGradGuard no_grad;
    const auto source = reference->parameters();
    const auto target = fused_model->parameters();
    for (size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
  }
  config.optimizer.fused = FusedOptimizer::off;
  auto per_tensor = make_optimizer(reference, config.optimizer);
  config.optimizer.fused = FusedOptimizer::on;
  auto fused = make_optimizer(fused_model, config.optimizer);
  ASSERT_NE(dynamic_cast<FusedAdamW*>(fused.get()), nullptr);
  ASSERT_EQ(dynamic_cast<FusedAdamW*>(per_tensor.get()), nullptr);
  for (int step = 0; step < 12; ++step) {
    const auto x = torch::randint(0, 64, {2, 16}, torch::kLong), y = torch::randint(0, 64, {2, 16}, torch::kLong);
    for (auto* pair : {&reference, &fused_model}) {
      (*pair)->zero_grad();
      accumulate_gradients(*pair, {{x, y}}, torch::kCPU, Precision::fp32);
    }
    per_tensor->step();
    fused->step();
  }
  const auto a = reference->parameters(), b = fused_model->parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-5, 1e-6)) << "parameter " << i << " max diff "
                                                         << (a[i] - b[i]).abs().max().item<double>();
  }
  // A fused run's optimizer state loads into a per-tensor optimizer and continues identically.
  const auto path = dir.file("fused_optimizer.pt");
  torch::save(*fused, path);
  config.optimizer.fused = FusedOptimizer::off;
  auto reloaded = make_optimizer(fused_model, config.optimizer);
  torch::load(*reloaded, path);
  const auto& state = static_cast<const torch::optim::AdamWParamState&>(
      *reloaded->state().at(fused_model->parameters()[0].unsafeGetTensorImpl()));
  EXPECT_EQ(state.step(), 12);
}

TEST(Trainer, FusedOptimizerRunTracksThePerTensorRun) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.optimizer.fused = FusedOptimizer::off;
  const auto per_tensor = train(config, quiet(dir.file("per_tensor")));
  config.optimizer.fused = FusedOptimizer::on;
  const auto fused = train(config, quiet(dir.file("fused")));
  ASSERT_EQ(per_tensor.losses.size(), fused.losses.size());
  for (size_t i = 0; i < fused.losses.size(); ++i) EXPECT_NEAR(per_tensor.losses[i], fused.losses[i], 1e-4) << i;
}

TEST(Trainer, BackendSwitchesFollowTheConfig) {
  TempDir dir;
  auto config = tiny_run(dir);
  config.train.steps = 1;
  config.train.deterministic = true;
  config.train.tf32 = false;
  train(config, quiet(dir.file("strict")));
  EXPECT_TRUE(compat::deterministic());
  EXPECT_FALSE(compat::cuda_tf32());
  config.train.deterministic = false;
  config.train.tf32 = true;
  train(config, quiet(dir.file("fast")));
  EXPECT_FALSE(compat::deterministic());
  EXPECT_TRUE(compat::cuda_tf32());
}

TEST(Trainer, RerunOfAFinishedRunReportsItsFigures) {
  TempDir dir;
  const auto config = tiny_run(dir);
  const auto first = train(config, quiet(dir.file("run")));
  ASSERT_FALSE(first.already_complete);
  const auto again = train(config, quiet(dir.file("run")));
  EXPECT_TRUE(again.already_complete);
  EXPECT_EQ(again.steps_done, first.steps_done);
  EXPECT_DOUBLE_EQ(again.final_loss, first.final_loss);
  EXPECT_DOUBLE_EQ(again.val_loss, first.val_loss);
  EXPECT_GT(again.final_loss, 0);
}

TEST(Trainer, SummaryHasPeakMemoryAndMfu) {
  TempDir dir;
  const auto config = tiny_run(dir);
  const auto result = train(config, quiet(dir.file("run")));
  std::ifstream in(dir.file("run/summary.json"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"peak_memory_bytes\""), std::string::npos);
  EXPECT_NE(text.find("\"mfu\""), std::string::npos);
  EXPECT_NE(text.find("\"device_name\": \"cpu\""), std::string::npos);
  EXPECT_GT(result.peak_memory_bytes, 10 << 20);  // at least the 10 MiB a LibTorch process holds
}

TEST(DevicePeaks, PublishedDenseFiguresOfKnownGpus) {
  auto tflops = [](const std::string& name, Precision p, bool tf32) {
    const auto peak = published_peak_flops(name, p, tf32);
    return peak ? *peak / 1e12 : -1.0;
  };
  EXPECT_DOUBLE_EQ(tflops("NVIDIA H200", Precision::bf16, true), 989.4);
  EXPECT_DOUBLE_EQ(tflops("NVIDIA H100 80GB HBM3", Precision::bf16, true), 989.4);
  EXPECT_DOUBLE_EQ(tflops("NVIDIA H100 PCIe", Precision::bf16, true), 756.0);
  EXPECT_DOUBLE_EQ(tflops("NVIDIA A100-SXM4-80GB", Precision::fp32, true), 156.0);   // TF32 tensor cores
  EXPECT_DOUBLE_EQ(tflops("NVIDIA A100-SXM4-80GB", Precision::fp32, false), 19.5);  // plain fp32
  EXPECT_DOUBLE_EQ(tflops("NVIDIA B200", Precision::bf16, true), 2250.0);
  EXPECT_DOUBLE_EQ(tflops("NVIDIA GeForce RTX 4090", Precision::bf16, true), -1.0);
  EXPECT_DOUBLE_EQ(tflops("cpu", Precision::bf16, true), -1.0);
}

TEST(Loader, WindowsSplitIntoTheSameInputsAndTargets) {
  TempDir dir;
  write_shard(dir.file("train_0.bin"), patterned_tokens(5000, 4), 64);
  LoaderOptions o;
  o.pattern = dir.file("train_*.bin");
  o.seq_len = 16;
  o.batch = 3;
  o.seed = 9;
  TokenLoader pairs(o), windows(o);
  for (int i = 0; i < 4; ++i) {
    const auto [x, y] = pairs.next();
    const auto w = windows.next_windows();
    ASSERT_EQ(w.sizes(), (std::vector<int64_t>{3, 17}));
    EXPECT_TRUE(torch::equal(x, w.narrow(1, 0, 16)));
    EXPECT_TRUE(torch::equal(y, w.narrow(1, 1, 16)));
  }
  EXPECT_EQ(pairs.state().batches_drawn, windows.state().batches_drawn);
}
