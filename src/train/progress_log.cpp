#include "progress_log.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "../common/log.h"
#include "ffnshape/config/model_config.h"
#include "ffnshape/params/count.h"
#include "ffnshape/train/device.h"

namespace fs = std::filesystem;

namespace ffnshape {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Peak matrix-multiply throughput of the device in the training dtype, for MFU: the fastest of
// several timed products, so a busy moment at start-up does not understate the peak.
double measure_peak_flops(torch::Device device, torch::ScalarType dtype) {
  const int64_t n = device.is_cuda() ? 8192 : 1024;
  auto a = torch::randn({n, n}, torch::TensorOptions().device(device)).to(dtype);
  auto b = torch::randn({n, n}, torch::TensorOptions().device(device)).to(dtype);
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  torch::mm(a, b);
  sync();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 8; ++i) {
    const auto start = Clock::now();
    torch::mm(a, b);
    sync();
    best = std::min(best, seconds_since(start));
  }
  return 2.0 * static_cast<double>(n) * n * n / best;
}

// The MFU denominator: train.peak_tflops when set, the published peak of a known GPU, else a
// product timed now. Returns FLOP/s and where the figure came from.
std::pair<double, std::string> peak_flops(const TrainConfig& tc, torch::Device device, torch::ScalarType dtype) {
  if (tc.peak_tflops > 0) return {tc.peak_tflops * 1e12, "train.peak_tflops"};
  if (device.is_cuda()) {
    const auto name = device_name(device);
    if (const auto published = published_peak_flops(name, tc.precision, tc.tf32 && dtype == torch::kFloat)) {
      return {*published, "published peak of " + name};
    }
    log::warn("no published peak for '{}': MFU is against a timed product (set train.peak_tflops to fix it)", name);
  }
  return {measure_peak_flops(device, dtype), "timed " + std::string(torch::toString(dtype)) + " product"};
}

std::string format_gb(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

std::string format_eta(double seconds) {
  const auto s = static_cast<int64_t>(seconds);
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return text;
}

// metrics.jsonl kept consistent with a resumed run: entries after the resumed step are dropped.
void truncate_metrics(const fs::path& path, int64_t step) {
  if (!fs::exists(path)) return;
  std::ifstream in(path);
  std::vector<std::string> kept;
  for (std::string line; std::getline(in, line);) {
    try {
      if (nlohmann::json::parse(line).value("step", int64_t{0}) <= step) kept.push_back(line);
    } catch (const nlohmann::json::exception&) {
      // A torn last line from a killed run: drop it.
    }
  }
  in.close();
  std::ofstream out(path, std::ios::trunc);
  for (const auto& line : kept) out << line << "\n";
}

// oneDNN emulates bf16 products on x86 CPUs without these instructions: 0.9 GFLOP/s against 170 in
// fp32 on an AVX2-only EPYC.
bool cpu_has_native_bf16() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
#else
  return true;  // not known here: no warning
#endif
}

// The text TensorBoard shows beside the curves: the shape in words, its widths and parameter counts.
std::string shape_markdown(const ModelConfig& model) {
  const auto params = count_parameters(model);
  std::string text = describe_shape(model) + "\n\n| layer | FFN hidden width |\n|---:|---:|\n";
  for (int64_t layer = 0; layer < model.n_layers; ++layer) {
    text += "| " + std::to_string(layer) + " | " + std::to_string(model.ffn_hidden(layer)) + " |\n";
  }
  text += "\nparameters: " + std::to_string(params.total()) + " in all; embedding " + std::to_string(params.embedding) +
          ", attention " + std::to_string(params.attention) + ", FFN " + std::to_string(params.ffn) + ", norms " +
          std::to_string(params.norm) + ", head " + std::to_string(params.head);
  return text;
}

// Markdown shows a code block verbatim: the YAML keeps its indentation.
std::string as_code_block(const std::string& text) {
  std::string block;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    block += "    " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return block;
}

}  // namespace

ProgressLog::ProgressLog(const fs::path& metrics_path, int64_t resumed_step, const RunConfig& config,
                         torch::Device device, int world_size, double elapsed_before, bool quiet)
    : config_(config), device_(device), quiet_(quiet), recording_(!metrics_path.empty()),
      elapsed_before_(elapsed_before) {
  const auto& tc = config.train;
  tokens_per_step_ = tc.micro_batch * tc.grad_accum * tc.seq_len * world_size;
  if (recording_) {
    truncate_metrics(metrics_path, resumed_step);
    metrics_.open(metrics_path, std::ios::app);
    if (config.log.tensorboard) {
      tensorboard_ = std::make_unique<TensorBoardWriter>(metrics_path.parent_path() / "tb", resumed_step);
      if (resumed_step == 0) {
        tensorboard_->text("config", as_code_block(to_yaml(config)), 0);
        tensorboard_->text("shape", shape_markdown(config.model), 0);
      }
    }
    const auto dtype = tc.precision == Precision::bf16 ? torch::kBFloat16 : torch::kFloat;
    flops_per_token_ = count_flops(config.model, tc.seq_len).training_per_token;
    std::string source;
    std::tie(peak_flops_, source) = peak_flops(tc, device, dtype);
    peak_flops_ *= world_size;  // every rank's device
    if (!quiet_) {
      log::info("{} on {} ({}){}; MFU against {:.1f} TFLOP/s ({}{})", to_string(tc.precision), device.str(),
                device_name(device), world_size > 1 ? " x " + std::to_string(world_size) + " ranks" : "",
                peak_flops_ / 1e12, source, world_size > 1 ? ", all ranks" : "");
      if (device.is_cpu() && tc.precision == Precision::bf16 && !cpu_has_native_bf16()) {
        log::warn("this CPU has no native bf16 products (no avx512_bf16 or amx_bf16): bf16 runs about 200x slower "
                  "than fp32 here; set train.precision: fp32 (--set train.precision=fp32)");
      }
    }
  }
  run_start_ = window_start_ = Clock::now();
}

double ProgressLog::elapsed_s() const { return elapsed_before_ + seconds_since(run_start_); }

bool ProgressLog::step(int64_t step, double loss, double lr, double grad_norm) {
  const int64_t total = config_.train.steps;
  window_tokens_ += tokens_per_step_;
  if (!recording_ || (step % config_.log.every != 0 && step != total)) return false;
  const double tokens_per_s = static_cast<double>(window_tokens_) / seconds_since(window_start_);
  mfu_ = tokens_per_s * flops_per_token_ / peak_flops_;
  const double eta = static_cast<double>(total - step) * tokens_per_step_ / tokens_per_s;
  const int64_t memory = peak_memory_bytes(device_);
  metrics_ << nlohmann::json{{"step", step},           {"loss", loss},   {"lr", lr},
                             {"grad_norm", grad_norm}, {"tokens_per_s", tokens_per_s}, {"mfu", mfu_},
                             {"peak_memory_bytes", memory}, {"elapsed_s", elapsed_s()}}
                  .dump()
           << std::endl;
  if (tensorboard_) {
    for (const auto& [tag, value] : {std::pair<const char*, double>{"train/loss", loss}, {"train/lr", lr},
                                     {"train/grad_norm", grad_norm}, {"train/tokens_per_s", tokens_per_s},
                                     {"train/mfu", mfu_}, {"train/peak_memory_bytes", static_cast<double>(memory)}}) {
      tensorboard_->scalar(tag, value, step);
    }
  }
  if (!quiet_) {
    log::info("step {:>6}/{} | loss {:.4f} | lr {:.2e} | {:.0f} tok/s | MFU {:.1f}% | mem {} | ETA {}", step, total,
              loss, lr, tokens_per_s, 100.0 * mfu_, format_gb(memory), format_eta(eta));
  }
  window_start_ = Clock::now();
  window_tokens_ = 0;
  return true;
}

void ProgressLog::eval(int64_t step, double val_loss, double val_ppl) {
  if (!recording_) return;
  metrics_ << nlohmann::json{{"step", step}, {"val_loss", val_loss}, {"val_ppl", val_ppl}}.dump() << std::endl;
  if (tensorboard_) {
    tensorboard_->scalar("val/loss", val_loss, step);
    tensorboard_->scalar("val/ppl", val_ppl, step);
  }
  if (!quiet_) log::info("step {:>6} | val_loss {:.4f} | val_ppl {:.2f}", step, val_loss, val_ppl);
}

void ProgressLog::layers(int64_t step, const LayerStats& stats) {
  if (!recording_) return;
  metrics_ << nlohmann::json{{"step", step}, {"layers", stats.to_json()}, {"layer_stats_s", stats.seconds}}.dump()
           << std::endl;
  if (!tensorboard_) return;
  for (const auto& [name, per_layer] : stats.values) {
    for (size_t layer = 0; layer < per_layer.size(); ++layer) {
      char tag[64];
      std::snprintf(tag, sizeof tag, "%s/layer_%02zu", name.c_str(), layer);
      tensorboard_->scalar(tag, per_layer[layer], step);
    }
  }
}

}  // namespace ffnshape
