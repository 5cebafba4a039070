// CUDA-only checks, run by scripts/gpu_check.sh on a machine with an NVIDIA GPU; each skips (and says
// so) where no CUDA device is visible, as on CI: CPU vs CUDA parity of attention and of a training
// step, bit-exact resume on the GPU, and the GPU-only bookkeeping (peak memory, published peaks).
#include <gtest/gtest.h>

#include "ffnshape/compat.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/train/device.h"
#include "ffnshape/train/loader.h"
#include "ffnshape/train/optimizer.h"
#include "ffnshape/train/trainer.h"
#include "quiet_training.h"
#include "temp_dir.h"
#include "tiny_corpus.h"

using namespace ffnshape;

namespace {

using ffnshape::testing::quiet;

#define REQUIRE_CUDA() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible"

RunConfig tiny_gpu_run(const ffnshape::testing::TempDir& dir, const std::string& device) {
  write_shard(dir.file("train_0.bin"), ffnshape::testing::patterned_tokens(20000, 1), 64);
  auto config = load_run_config_from_string(R"(
model: {vocab_size: 64, d_model: 64, n_layers: 2, n_heads: 4, n_kv_heads: 2, max_seq_len: 64,
        ffn: {kind: hourglass, k: 2, hidden: 32}}
train: {seq_len: 64, micro_batch: 4, grad_accum: 2, steps: 8, seed: 3, tf32: false}
optimizer: {lr: 3.0e-3, min_lr: 3.0e-4, warmup_steps: 2}
eval: {every: 0, batches: 1}
checkpoint: {every: 100, keep: 3}
log: {every: 1}
)");
  config.data.train = dir.file("train_*.bin");
  config.train.device = device;
  return config;
}

}  // namespace

TEST(Cuda, AttentionMatchesTheCpu) {
  REQUIRE_CUDA();
  compat::set_cuda_tf32(false);
  torch::manual_seed(1);
  // 8 query heads sharing 2 kv heads, head_dim 64 (a flash-attention shape).
  const auto q = torch::randn({2, 8, 128, 64}), k = torch::randn({2, 2, 128, 64}), v = torch::randn({2, 2, 128, 64});
  const auto cpu = compat::causal_attention(q, k, v);
  const auto gpu = compat::causal_attention(q.cuda(), k.cuda(), v.cuda()).cpu();
  EXPECT_TRUE(torch::allclose(cpu, gpu, 1e-4, 1e-5)) << (cpu - gpu).abs().max().item<double>();
  // bf16 through the fused kernels, against the fp32 CPU result at bf16 precision.
  const auto gpu_bf16 =
      compat::causal_attention(q.cuda().to(torch::kBFloat16), k.cuda().to(torch::kBFloat16), v.cuda().to(torch::kBFloat16));
  EXPECT_TRUE(torch::allclose(cpu, gpu_bf16.cpu().to(torch::kFloat), 3e-2, 3e-2));
}

TEST(Cuda, TrainingStepsMatchTheCpu) {
  REQUIRE_CUDA();
  ffnshape::testing::TempDir dir;
  auto cpu_config = tiny_gpu_run(dir, "cpu");
  cpu_config.optimizer.fused = FusedOptimizer::off;
  const auto cpu = train(cpu_config, quiet(dir.file("cpu")));
  const auto gpu = train(tiny_gpu_run(dir, "cuda"), quiet(dir.file("gpu")));  // fused AdamW, pinned batches
  ASSERT_EQ(cpu.losses.size(), gpu.losses.size());
  for (size_t i = 0; i < cpu.losses.size(); ++i) EXPECT_NEAR(cpu.losses[i], gpu.losses[i], 2e-3) << "step " << i + 1;
}

TEST(Cuda, ResumeIsBitExactOnTheGpu) {
  REQUIRE_CUDA();
  ffnshape::testing::TempDir dir;
  auto config = tiny_gpu_run(dir, "cuda");
  config.train.deterministic = true;
  const auto straight = train(config, quiet(dir.file("straight")));
  auto first = quiet(dir.file("resumed"));
  first.stop_at_step = 4;
  ASSERT_TRUE(train(config, first).interrupted);
  const auto rest = train(config, quiet(dir.file("resumed")));
  ASSERT_EQ(rest.losses.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(rest.losses[i], straight.losses[4 + i]) << "step " << 5 + i;
}

TEST(Cuda, Bf16StepWithCheckpointingAndPeakMemory) {
  REQUIRE_CUDA();
  ffnshape::testing::TempDir dir;
  auto config = tiny_gpu_run(dir, "cuda");
  config.train.precision = Precision::bf16;
  config.train.activation_checkpointing = true;
  const auto result = train(config, quiet(dir.file("bf16")));
  EXPECT_LT(result.losses.back(), result.losses.front());
  EXPECT_GT(result.peak_memory_bytes, 0);
  EXPECT_LT(result.peak_memory_bytes, int64_t{1} << 30);  // a 0.1M-parameter model stays far below 1 GiB
  const auto info = build_info();
  ASSERT_FALSE(info.cuda_devices.empty());
  EXPECT_TRUE(info.cuda_compiled);
  std::cout << "GPU: " << info.cuda_devices[0].name << ", published bf16 peak "
            << published_peak_flops(info.cuda_devices[0].name, Precision::bf16, true).value_or(0) / 1e12 << " TFLOP/s\n";
}
