#include "ffnshape/train/trainer.h"

#include "ffnshape/schedule/schedule.h"

#include "../common/log.h"
#include "run_lock.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "ffnshape/compat.h"
#include "ffnshape/params/count.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/device.h"
#include "ffnshape/train/distributed_env.h"
#include "ffnshape/train/host_allocator.h"
#include "ffnshape/train/loader.h"
#include "ffnshape/train/lr_schedule.h"
#include "ffnshape/train/optimizer.h"
#include "ffnshape/train/tokenizer.h"
#include "layer_stats.h"
#include "progress_log.h"
#include "ranks.h"

namespace fs = std::filesystem;

namespace ffnshape {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

}  // namespace

// Once per process. A stop request stays pending until a run acts on it (checkpoints and stops), so
// one that arrives between two runs of an experiment stops the second instead of being forgotten.
void install_stop_handlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  // A parallel experiment starts its runs with these blocked until now (experiment/side_by_side.cpp).
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
}

namespace {

// Process-wide switches a run asks for: threads, TF32, deterministic kernels.
void configure_backend(const TrainConfig& tc, torch::Device device) {
  torch::set_num_threads(intra_op_threads(tc, device));
  compat::set_cuda_tf32(tc.tf32);
  if (tc.deterministic && device.is_cuda()) {
    // cuBLAS is deterministic only with a fixed workspace, read when it starts.
    setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
  }
  compat::set_deterministic(tc.deterministic);
}

// One step's micro-batches, on the device: on a GPU each (batch, seq + 1) block of windows is one
// asynchronous copy from page-locked memory, split into inputs and targets there.
std::vector<Batch> draw_step(TokenLoader& loader, int64_t micro_batches, torch::Device device) {
  std::vector<Batch> micro;
  for (int64_t i = 0; i < micro_batches; ++i) {
    auto windows = loader.next_windows().to(device, /*non_blocking=*/true);
    const auto seq = windows.size(1) - 1;
    micro.emplace_back(windows.narrow(1, 0, seq), windows.narrow(1, 1, seq));
  }
  return micro;
}

}  // namespace

int intra_op_threads(const TrainConfig& config, torch::Device /*device*/) {
  if (config.threads > 0) return static_cast<int>(config.threads);
  // The wheel's LibTorch runs fp32 products in MKL and bf16 products in oneDNN, both on torch's own
  // pool, so every core helps (measured: the demo model in fp32 at 4,198 tokens/s with two threads,
  // 2,198 with one).
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void request_stop() { g_stop.store(true); }

bool stop_pending() { return g_stop.load(); }

std::vector<Batch> validation_set(const RunConfig& config, const std::string& val_pattern) {
  return validation_batches(val_pattern, config.train.seq_len, config.train.micro_batch, config.eval.batches,
                            config.model.vocab_size);
}

std::pair<double, double> evaluate(nn::TransformerLM& model, const RunConfig& config, torch::Device device,
                                   const std::string& val_pattern) {
  return evaluate(model, validation_set(config, val_pattern), device, config.train.precision);
}

namespace {

// Summed loss and target count over rows [first_row, first_row + rows) of every batch (a rank's
// share of them; rows < 0: all).
std::pair<double, double> loss_sums(nn::TransformerLM& model, const std::vector<Batch>& batches, torch::Device device,
                                    Precision precision, int64_t first_row = 0, int64_t rows = -1) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  double loss_sum = 0, tokens = 0;
  for (const auto& batch : batches) {
    const auto x = rows < 0 ? batch.first : batch.first.narrow(0, first_row, rows);
    const auto y = rows < 0 ? batch.second : batch.second.narrow(0, first_row, rows);
    compat::AutocastGuard autocast(device.type(), torch::kBFloat16, precision == Precision::bf16);
    const auto out = model->forward_with_loss(x.to(device), y.to(device));
    const double n = static_cast<double>(y.numel());
    loss_sum += out.ce_loss.item<double>() * n;
    tokens += n;
  }
  model->train(was_training);
  return {loss_sum, tokens};
}

// Forward and backward over one step's micro-batches of this rank, each loss weighted by its share
// of the real target tokens of the whole step on all ranks, so that the gradients summed over ranks
// equal those of one batch holding every rank's tokens. Returns this rank's part of the step loss.
double accumulate_on_ranks(nn::TransformerLM& model, const std::vector<Batch>& micro, torch::Device device,
                           Precision precision, int64_t ignore_index, Ranks* ranks) {
  double local_tokens = 0;
  std::vector<double> counted;
  for (const auto& batch : micro) {
    counted.push_back(static_cast<double>(batch.second.ne(ignore_index).sum().item<int64_t>()));
    local_tokens += counted.back();
  }
  const double step_tokens = ranks ? ranks->sum(local_tokens) : local_tokens;
  double step_loss = 0;
  for (size_t i = 0; i < micro.size(); ++i) {
    if (ranks && i + 1 == micro.size()) ranks->before_last_backward();
    if (counted[i] == 0) continue;
    const double share = counted[i] / step_tokens;
    torch::Tensor loss;
    {
      compat::AutocastGuard autocast(device.type(), torch::kBFloat16, precision == Precision::bf16);
      loss = model->forward_with_loss(micro[i].first.to(device), micro[i].second.to(device), ignore_index).loss;
    }
    (loss * share).backward();
    step_loss += loss.item<double>() * share;
  }
  if (ranks) ranks->finish_gradients();
  return step_loss;
}

}  // namespace

std::pair<double, double> evaluate(nn::TransformerLM& model, const std::vector<Batch>& batches, torch::Device device,
                                   Precision precision) {
  const auto [loss_sum, tokens] = loss_sums(model, batches, device, precision);
  const double loss = loss_sum / tokens;
  return {loss, std::exp(loss)};
}

double accumulate_gradients(nn::TransformerLM& model, const std::vector<Batch>& micro, torch::Device device,
                            Precision precision, int64_t ignore_index) {
  return accumulate_on_ranks(model, micro, device, precision, ignore_index, nullptr);
}

namespace {

void check_run_config(const RunConfig& config, const TrainOptions& options) {
  if (config.data.train.empty()) {
    throw ConfigError("data.train", "is not set", "point it at token shards, e.g. data/bigtxt/train_*.bin");
  }
  if (options.run_dir.empty()) throw ConfigError("--run-dir", "is empty", "give a directory for the run's outputs");
  if (!config.train.init_from.empty() && !fs::exists(config.train.init_from)) {
    throw ConfigError("train.init_from", "'" + config.train.init_from + "' does not exist",
                      "give a run directory or a checkpoint folder (e.g. one written by ffnshape import)");
  }
  if (!config.data.tokenizer.empty()) {
    const int vocab = Tokenizer::load(config.data.tokenizer).vocab_size();
    if (vocab > config.model.vocab_size) {
      throw ConfigError("model.vocab_size", "is " + std::to_string(config.model.vocab_size) + " but the tokenizer " +
                                                config.data.tokenizer + " has " + std::to_string(vocab) + " tokens",
                        "set model.vocab_size to at least " + std::to_string(vocab));
    }
  }
}

// Where a run starts, decided before anything in the run directory is written.
std::optional<std::string> resume_point(const TrainOptions& options) {
  if (options.resume == "auto") return latest_checkpoint(options.run_dir);
  if (options.resume == "never") {
    if (latest_checkpoint(options.run_dir)) {
      throw ConfigError("--resume", "is 'never' but " + options.run_dir + " already holds checkpoints of a run",
                        "use --resume auto to continue it, or choose a new --run-dir (nothing was overwritten)");
    }
    return std::nullopt;
  }
  return options.resume;
}

// The figures of a run that had already finished, from its summary.json (nothing is rewritten).
TrainResult finished_run(const fs::path& run_dir, const TrainingState& state) {
  TrainResult result;
  result.already_complete = true;
  result.steps_done = state.step;
  result.tokens_seen = state.tokens_seen;
  result.val_loss = result.val_ppl = std::nan("");
  std::ifstream in(run_dir / "summary.json");
  const auto summary = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (summary.is_discarded()) return result;
  auto number = [&](const char* key) {
    return summary.contains(key) && summary[key].is_number() ? summary[key].get<double>() : std::nan("");
  };
  result.final_loss = number("final_loss");
  result.val_loss = number("val_loss");
  result.val_ppl = number("val_ppl");
  result.tokens_per_s = number("tokens_per_s");
  result.peak_memory_bytes = summary.value("peak_memory_bytes", int64_t{0});
  return result;
}

void write_summary(const fs::path& run_dir, const RunConfig& config, const TrainingState& state,
                   const TrainResult& result, torch::Device device, double mfu, int world_size,
                   double gradient_wait_s) {
  const auto counts = count_parameters(config.model);
  const bool has_val = !config.data.val.empty();
  const nlohmann::json summary = {
      {"params", {{"total", counts.total()}, {"embedding", counts.embedding}, {"attention", counts.attention},
                  {"ffn", counts.ffn}, {"norm", counts.norm}, {"head", counts.head},
                  {"non_embedding", counts.non_embedding()}}},
      {"steps", state.step},
      {"complete", state.step == config.train.steps},
      {"tokens_seen", state.tokens_seen},
      {"final_loss", result.final_loss},
      {"val_loss", has_val ? nlohmann::json(result.val_loss) : nlohmann::json()},
      {"val_ppl", has_val ? nlohmann::json(result.val_ppl) : nlohmann::json()},
      {"wall_time_s", state.elapsed_s},
      {"tokens_per_s", result.tokens_per_s},
      {"mfu", mfu},
      {"peak_memory_bytes", result.peak_memory_bytes},
      {"device", device.str()},
      {"world_size", world_size},
      {"gradient_wait_s", gradient_wait_s},  // rank 0's wait for gradient sums after backward
      {"device_name", device_name(device)},
      {"precision", to_string(config.train.precision)}};
  std::ofstream(run_dir / "summary.json") << summary.dump(2) << "\n";
}

}  // namespace

namespace {

// What one run trains: the model, its optimizer, the training stream and the fixed validation batches.
struct TrainingRun {
  nn::TransformerLM model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::unique_ptr<TokenLoader> loader;
  std::vector<Batch> val_batches;  // empty without data.val
};

TrainingRun build_run(const RunConfig& config, torch::Device device, const Ranks& ranks) {
  const auto& tc = config.train;
  TrainingRun run;
  torch::manual_seed(tc.seed);
  run.model = nn::TransformerLM(config.model);
  run.model->to(device);
  run.model->set_activation_checkpointing(tc.activation_checkpointing);
  run.optimizer = make_optimizer(run.model, config.optimizer, device);
  LoaderOptions lo;
  lo.pattern = config.data.train;
  lo.seq_len = tc.seq_len;
  lo.batch = tc.micro_batch;
  lo.seed = tc.seed;
  lo.rank = ranks.rank();
  lo.world = ranks.world();
  lo.vocab_size = config.model.vocab_size;
  lo.pin_memory = device.is_cuda();
  run.loader = std::make_unique<TokenLoader>(lo);
  // Read once, before anything is written: a bad validation glob fails now, not at the first eval.
  if (!config.data.val.empty()) {
    // Global batches of every rank's rows: the same windows at every world size.
    run.val_batches = validation_batches(config.data.val, tc.seq_len, tc.micro_batch * ranks.world(),
                                         config.eval.batches, config.model.vocab_size);
  }
  return run;
}

struct StepStats {
  double loss = 0, grad_norm = 0, lr = 0;
  bool stop_requested = false;  // on any rank
};

// One optimizer step: learning rate, forward and backward over the step's micro-batches, gradients
// summed over ranks, clipping, and the update, refused before it happens when the loss or the
// gradient norm is not finite. Every rank sees the same loss, norm and stop request. With
// `layer_stats` (rank 0, on the steps log.layer_stats_every names) also measures the layers on the
// step's first micro-batch, their gradients before clipping and the update the step makes.
StepStats optimizer_step(TrainingRun& run, Ranks& ranks, const RunConfig& config, torch::Device device, int64_t step,
                         LayerStats* layer_stats) {
  const auto& tc = config.train;
  StepStats stats;
  stats.lr = learning_rate(config.optimizer, step, tc.steps);
  set_learning_rate(*run.optimizer, stats.lr);
  run.optimizer->zero_grad();
  const auto micro = draw_step(*run.loader, tc.grad_accum, device);
  const double local_loss = accumulate_on_ranks(run.model, micro, device, tc.precision, -1, &ranks);
  const auto sums = ranks.sum({local_loss, g_stop.load() ? 1.0 : 0.0});
  stats.loss = sums[0];
  stats.stop_requested = sums[1] > 0;
  // What the layer statistics cost the step, summed over their three parts.
  auto timed = [&](auto&& measure) {
    const auto since = std::chrono::steady_clock::now();
    measure();
    layer_stats->seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  };
  if (layer_stats) {
    timed([&] {
      measure_gradients(run.model, *layer_stats);
      measure_activations(run.model, micro.front().first, tc.precision, *layer_stats);
    });
  }
  const double clip = config.optimizer.clip > 0 ? config.optimizer.clip : std::numeric_limits<double>::infinity();
  stats.grad_norm = ranks.clip_gradients(*run.model, clip);
  if (!std::isfinite(stats.loss) || !std::isfinite(stats.grad_norm)) {
    throw NonFiniteLoss("the loss became non-finite at step " + std::to_string(step + 1) + " (loss " +
                        std::to_string(stats.loss) + ", grad norm " + std::to_string(stats.grad_norm) +
                        "); the last complete checkpoint is untouched\n  fix: lower optimizer.lr, raise "
                        "warmup_steps, or train in fp32; then rerun with --resume auto");
  }
  std::optional<UpdateProbe> update;
  if (layer_stats) timed([&] { update.emplace(run.model); });
  run.optimizer->step();
  if (update) timed([&] { update->finish(run.model, *layer_stats); });
  return stats;
}

// Validation loss over the fixed batches, whose rows the ranks split as they split training batches.
std::pair<double, double> evaluate_on_ranks(TrainingRun& run, Ranks& ranks, const RunConfig& config,
                                            torch::Device device) {
  const int64_t rows = config.train.micro_batch;
  const auto [loss_sum, tokens] =
      loss_sums(run.model, run.val_batches, device, config.train.precision, ranks.rank() * rows, rows);
  const auto sums = ranks.sum({loss_sum, tokens});
  const double loss = sums[0] / sums[1];
  return {loss, std::exp(loss)};
}

// The step loop, from state.step to train.steps or to a stop request; evaluates and checkpoints on
// the config's schedule and at the end. Rank 0 alone writes.
void run_steps(TrainingRun& run, Ranks& ranks, TrainingState& state, ProgressLog& progress, const RunConfig& config,
               const TrainOptions& options, torch::Device device, TrainResult& result) {
  const auto& tc = config.train;
  const bool has_val = !run.val_batches.empty();
  auto save = [&] {
    state.loader = run.loader->state();
    ranks.before_save();
    if (ranks.is_root()) {
      save_checkpoint(checkpoint_dir(options.run_dir, state.step), run.model, *run.optimizer, state);
      prune_checkpoints(options.run_dir, config.checkpoint.keep);
    }
    ranks.after_save();
  };
  auto run_eval = [&] {
    std::tie(result.val_loss, result.val_ppl) = evaluate_on_ranks(run, ranks, config, device);
    progress.eval(state.step, result.val_loss, result.val_ppl);
  };
  run.model->train();
  while (state.step < tc.steps) {
    LayerStats layers;
    const bool measure_layers = ranks.is_root() && layer_stats_due(state.step + 1, config.log.layer_stats_every);
    const auto stats = optimizer_step(run, ranks, config, device, state.step, measure_layers ? &layers : nullptr);
    ++state.step;
    state.tokens_seen += tc.micro_batch * tc.grad_accum * tc.seq_len * ranks.world();
    result.losses.push_back(stats.loss);
    result.final_loss = stats.loss;
    progress.step(state.step, stats.loss, stats.lr, stats.grad_norm);
    if (measure_layers) progress.layers(state.step, layers);
    state.elapsed_s = progress.elapsed_s();
    const bool last = state.step == tc.steps;
    if (has_val && config.eval.every > 0 && state.step % config.eval.every == 0 && !last) run_eval();
    if (stats.stop_requested || (options.stop_at_step > 0 && state.step >= options.stop_at_step && !last)) {
      save();
      if (!options.quiet && ranks.is_root()) {
        log::warn("stopped at step {}; checkpoint saved, rerun with --resume auto", state.step);
      }
      result.interrupted = true;
      if (stats.stop_requested) g_stop.store(false);  // acted on: a later run in this process starts afresh
      return;
    }
    if (!last && config.checkpoint.every > 0 && state.step % config.checkpoint.every == 0) save();
  }
  if (has_val) run_eval();
  save();
}

}  // namespace

TrainResult train(const RunConfig& requested, const TrainOptions& options) {
  // The handlers come first: a SIGINT / SIGTERM while the ranks wait for each other ends the wait
  // with a message instead of killing the process or being noticed an hour later.
  if (options.install_signal_handlers) install_stop_handlers();
  // Ranks meet first: in an experiment, rank 0 may still be writing the profile a schedule reads.
  Ranks ranks(read_distributed_env(), requested.train, resolve_device(requested.train.device), options.join_timeout_s,
              [] { return g_stop.load(); });
  RunConfig config = requested;
  schedule::resolve_schedule(config.model);  // widths from the schedule, before anything is built
  check_run_config(config, options);
  const auto device = ranks.device();
  if (config.log.layer_stats_every > 0 && config.train.zero > 0 && ranks.world() > 1) {
    throw ConfigError("log.layer_stats_every", "needs each layer's whole gradient, which train.zero: 1 splits over the ranks",
                      "set train.zero: 0 for a run with layer statistics, or log.layer_stats_every: 0");
  }
  configure_backend(config.train, device);
  keep_host_memory_mapped();
  const fs::path run_dir(options.run_dir);
  std::optional<RunLock> lock;
  std::exception_ptr root_failure;  // rank 0's, told to every rank before it is thrown
  if (ranks.is_root()) {
    try {
      fs::create_directories(run_dir);
      lock.emplace(run_dir.string());
    } catch (...) {
      root_failure = std::current_exception();
    }
  }
  ranks.share_root_start(root_failure != nullptr);
  if (root_failure) std::rethrow_exception(root_failure);
  const auto resume_from = resume_point(options);

  auto run = build_run(config, device, ranks);
  TrainingState state;
  if (resume_from) {
    state = load_checkpoint(*resume_from, run.model, run.optimizer.get(), device);
    run.loader->set_state(state.loader);
  }
  ranks.check_same_step(state.step);
  if (resume_from) {
    if (state.step >= config.train.steps && fs::exists(run_dir / "summary.json")) {
      auto finished = finished_run(run_dir, state);
      finished.rank = ranks.rank();
      finished.world_size = ranks.world();
      return finished;
    }
    if (!options.quiet && ranks.is_root()) log::info("resuming from {} (step {})", *resume_from, state.step);
  } else if (!config.train.init_from.empty()) {
    const auto source = initialise_from(config.train.init_from, run.model);
    if (!options.quiet && ranks.is_root()) log::info("weights from {} (new optimizer, step 0)", source);
  }
  ranks.attach(*run.model, run.optimizer);
  if (ranks.is_root()) std::ofstream(run_dir / "config.yaml") << to_yaml(config);
  ProgressLog progress(ranks.is_root() ? run_dir / "metrics.jsonl" : fs::path(), state.step, config, device,
                       ranks.world(), state.elapsed_s, options.quiet || !ranks.is_root());
  reset_peak_memory(device);

  TrainResult result;
  result.val_loss = result.val_ppl = std::nan("");
  result.rank = ranks.rank();
  result.world_size = ranks.world();
  run_steps(run, ranks, state, progress, config, options, device, result);
  result.steps_done = state.step;
  result.tokens_seen = state.tokens_seen;
  result.tokens_per_s = static_cast<double>(state.tokens_seen) / std::max(state.elapsed_s, 1e-9);
  result.peak_memory_bytes = peak_memory_bytes(device);
  if (ranks.is_root()) write_summary(run_dir, config, state, result, device, progress.mfu(), ranks.world(),
                                      ranks.exposed_wait_s());
  return result;
}

}  // namespace ffnshape
