// bench_train_speed: training-step throughput of ffnshape on the exact code path of the trainer's step
// (src/train/trainer.cpp): set_learning_rate, zero_grad, accumulate_gradients (forward under the
// bf16 autocast guard when asked, backward), clip_grad_norm_ 1.0, AdamW step from make_optimizer.
// bench/torch_reference.py is the same model and step in Python PyTorch, with the same arguments and
// the same JSON output; bench/train_speed.sh runs the two side by side.
//
//   bench_train_speed --config configs/demo/conventional.yaml --batch 8 --seq-len 256 --steps 20 \
//                     --warmup 3 --dtype fp32|bf16 --threads N [--device cpu|cuda] [--lr 1e-3] [--seed 0]
//                     [--breakdown]
//
// On CUDA the step is the trainer's too: fused AdamW (optimizer.fused auto), TF32 per the config's
// train.tf32; the JSON adds the peak of allocated device memory and the GPU's published peak FLOP/s.
//
// Tokens come from a seeded Zipf unigram distribution (learnable, so the loss falls from log(vocab));
// drawing them is not timed. --breakdown then runs `steps` more steps with each phase timed
// separately (same operations, split open) and adds "breakdown_ms" to the JSON.
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include "ffnshape/train/host_allocator.h"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ffnshape/compat.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/nn/model.h"
#include "ffnshape/train/device.h"
#include "ffnshape/train/optimizer.h"
#include "ffnshape/train/trainer.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Args {
  std::string config;
  int64_t batch = 8, seq_len = 256, steps = 20, warmup = 3, threads = 0;
  uint64_t seed = 0;
  double lr = 1e-3;
  std::string dtype = "fp32";
  std::string device = "cpu";
  bool breakdown = false;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "error: " << problem << "\n"
            << "usage: bench_train_speed --config FILE [--batch 8] [--seq-len 256] [--steps 20] [--warmup 3]\n"
            << "                         [--dtype fp32|bf16] [--threads N] [--device cpu|cuda] [--lr 1e-3] [--seed 0]\n"
            << "                         [--breakdown]\n";
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "--breakdown") {
      a.breakdown = true;
      continue;
    }
    if (key == "-h" || key == "--help") usage("help requested");
    if (i + 1 >= argc) usage(key + " needs a value");
    const std::string value = argv[++i];
    try {
      if (key == "--config") a.config = value;
      else if (key == "--batch") a.batch = std::stoll(value);
      else if (key == "--seq-len") a.seq_len = std::stoll(value);
      else if (key == "--steps") a.steps = std::stoll(value);
      else if (key == "--warmup") a.warmup = std::stoll(value);
      else if (key == "--threads") a.threads = std::stoll(value);
      else if (key == "--seed") a.seed = std::stoull(value);
      else if (key == "--lr") a.lr = std::stod(value);
      else if (key == "--dtype") a.dtype = value;
      else if (key == "--device") a.device = value;
      else usage("unknown option " + key);
    } catch (const std::logic_error&) {
      usage("bad value for " + key + ": " + value);
    }
  }
  if (a.config.empty()) usage("--config is required");
  if (a.dtype != "fp32" && a.dtype != "bf16") usage("--dtype must be fp32 or bf16");
  if (a.batch < 1 || a.seq_len < 1 || a.steps < 1 || a.warmup < 0) usage("batch, seq-len, steps must be >= 1");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  const int threads =
      static_cast<int>(args.threads > 0 ? args.threads : std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
  ffnshape::keep_host_memory_mapped();  // as train() does

  ffnshape::RunConfig config;
  try {
    config = ffnshape::load_run_config(args.config);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  const auto& mc = config.model;
  const auto precision = args.dtype == "bf16" ? ffnshape::Precision::bf16 : ffnshape::Precision::fp32;
  torch::Device device(torch::kCPU);
  try {
    device = ffnshape::resolve_device(args.device);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  ffnshape::compat::set_cuda_tf32(config.train.tf32);

  torch::manual_seed(args.seed);
  ffnshape::nn::TransformerLM model(mc);
  model->to(device);
  model->train();
  auto optimizer = ffnshape::make_optimizer(model, config.optimizer, device);  // clip, betas, wd, fused

  auto gen = at::make_generator<at::CPUGeneratorImpl>(args.seed + 1);
  const auto probs = 1.0 / torch::arange(1, mc.vocab_size + 1, torch::kDouble);
  auto next_batch = [&] {
    auto tokens = torch::multinomial(probs, args.batch * (args.seq_len + 1), /*replacement=*/true, gen)
                      .view({args.batch, args.seq_len + 1});
    tokens = tokens.to(device);
    return std::make_pair(tokens.narrow(1, 0, args.seq_len), tokens.narrow(1, 1, args.seq_len));
  };
  const double clip = config.optimizer.clip > 0 ? config.optimizer.clip : std::numeric_limits<double>::infinity();

  std::vector<double> losses;
  double timed_ms = 0;
  for (int64_t step = 0; step < args.warmup + args.steps; ++step) {
    std::vector<std::pair<torch::Tensor, torch::Tensor>> micro{next_batch()};
    const auto start = Clock::now();
    // --- the trainer's step, verbatim ---
    ffnshape::set_learning_rate(*optimizer, args.lr);
    optimizer->zero_grad();
    const double step_loss = ffnshape::accumulate_gradients(model, micro, device, precision);
    torch::nn::utils::clip_grad_norm_(model->parameters(), clip);
    optimizer->step();
    // ---
    ffnshape::synchronize(device);
    const double ms = ms_since(start);
    losses.push_back(step_loss);
    if (step >= args.warmup) timed_ms += ms;
  }

  if (const char* trace = std::getenv("FFNSHAPE_BENCH_TRACE")) {
    // Chrome trace of a few steps, for comparing operator times with the Python side.
    torch::autograd::profiler::RecordProfile guard(trace);
    for (int i = 0; i < 3; ++i) {
      std::vector<std::pair<torch::Tensor, torch::Tensor>> micro{next_batch()};
      optimizer->zero_grad();
      ffnshape::accumulate_gradients(model, micro, device, precision);
      optimizer->step();
    }
  }

  std::map<std::string, double> breakdown;
  if (args.breakdown) {
    // The same step split open (accumulate_gradients inlined for one micro-batch).
    for (int64_t step = 0; step < args.steps; ++step) {
      auto [x, y] = next_batch();
      auto t = Clock::now();
      auto lap = [&](const char* name) {
        breakdown[name] += ms_since(t);
        t = Clock::now();
      };
      ffnshape::set_learning_rate(*optimizer, args.lr);
      optimizer->zero_grad();
      lap("zero_grad");
      const double counted = static_cast<double>(y.ne(-1).sum().item<int64_t>());
      lap("count_tokens");
      torch::Tensor loss;
      {
        ffnshape::compat::AutocastGuard autocast(device.type(), torch::kBFloat16, precision == ffnshape::Precision::bf16);
        loss = model->forward_with_loss(x, y, -1).loss;
        lap("forward");
      }
      lap("autocast_exit");
      (loss * (counted / counted)).backward();
      lap("backward");
      loss.item<double>();
      torch::nn::utils::clip_grad_norm_(model->parameters(), clip);
      lap("clip");
      optimizer->step();
      lap("optimizer");
    }
    for (auto& [name, ms] : breakdown) ms /= static_cast<double>(args.steps);
  }

  const double tokens_per_step = static_cast<double>(args.batch * args.seq_len);
  const auto published = ffnshape::published_peak_flops(ffnshape::device_name(device), precision, config.train.tf32);
  std::printf(
      "{\"impl\": \"ffnshape\", \"torch\": \"%d.%d.%d\", \"config\": \"%s\", \"dtype\": \"%s\", \"threads\": %d, "
      "\"batch\": %lld, \"seq_len\": %lld, \"steps\": %lld, \"params\": %lld, \"tokens_per_s\": %.3f, "
      "\"ms_per_step\": %.3f, \"loss_first\": %.6f, \"loss_last\": %.6f, \"device\": \"%s\", "
      "\"peak_memory_bytes\": %lld, \"published_peak_flops\": %.6g",
      TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH, args.config.c_str(), args.dtype.c_str(),
      torch::get_num_threads(), static_cast<long long>(args.batch), static_cast<long long>(args.seq_len),
      static_cast<long long>(args.steps), static_cast<long long>(model->num_parameters()),
      tokens_per_step * static_cast<double>(args.steps) / (timed_ms / 1000.0), timed_ms / static_cast<double>(args.steps),
      losses.front(), losses.back(), ffnshape::device_name(device).c_str(),
      static_cast<long long>(ffnshape::peak_memory_bytes(device)), published.value_or(0.0));
  if (args.breakdown) {
    std::printf(", \"breakdown_ms\": {");
    bool first = true;
    for (const auto& [name, ms] : breakdown) {
      std::printf("%s\"%s\": %.3f", first ? "" : ", ", name.c_str(), ms);
      first = false;
    }
    std::printf("}");
  }
  std::printf("}\n");
  return 0;
}
