// The training loop: gradient accumulation with the loss normalised by the real token count, global
// gradient clipping, fp32 or bf16 autocast with fp32 master weights, periodic evaluation, logging and
// complete checkpoints, exact resume, and a clean stop on SIGINT / SIGTERM or a non-finite loss.
// Started by torchrun or srun as several ranks, train() runs data-parallel (see data_parallel.h):
// micro_batch is per rank, and R ranks give what one process with R times the micro-batch gives.
#pragma once

#include <torch/torch.h>

#include <string>

#include "ffnshape/config/run_config.h"
#include "ffnshape/nn/model.h"
#include "ffnshape/train/device.h"

namespace ffnshape {

struct TrainOptions {
  std::string run_dir;
  std::string resume = "auto";  // auto | never | PATH of a checkpoint folder
  int64_t stop_at_step = 0;     // > 0: checkpoint and stop cleanly once this step is done (time slicing)
  bool install_signal_handlers = true;
  bool quiet = false;           // no console progress (tests)
  // Data-parallel runs: how long the ranks wait for each other at the start; 0 means
  // train.collective_timeout_s. Experiments wait longer: rank 0 profiles and scores between runs.
  double join_timeout_s = 0;
};

struct TrainResult {
  int64_t steps_done = 0;       // the step count reached (== train.steps unless stopped)
  bool interrupted = false;     // stopped by SIGINT / SIGTERM after checkpointing
  bool already_complete = false;  // the run had finished before this call; figures from its summary
  double final_loss = 0;
  double val_loss = 0, val_ppl = 0;  // NaN without validation data
  double tokens_per_s = 0;
  int64_t tokens_seen = 0;
  int64_t peak_memory_bytes = 0;  // GPU: caching allocator peak; CPU: peak resident set
  std::vector<double> losses;   // training loss of each step this process ran
  int rank = 0, world_size = 1; // this process in a data-parallel job; rank 0 alone wrote the run's files
};

// Thrown when the loss or the gradient norm is not finite; the last good checkpoint is untouched.
class NonFiniteLoss : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

TrainResult train(const RunConfig& config, const TrainOptions& options);

// Forward and backward over one step's micro-batches, each loss weighted by its share of the step's
// real (non-ignored) target tokens, so gradients equal those of one batch holding them all. Returns
// the step's loss. Autocasts to bf16 when `precision` says so.
double accumulate_gradients(nn::TransformerLM& model, const std::vector<std::pair<torch::Tensor, torch::Tensor>>& micro,
                            torch::Device device, Precision precision, int64_t ignore_index = -1);

using Batch = std::pair<torch::Tensor, torch::Tensor>;  // (inputs, targets), each (batch, seq)

// The config's fixed validation windows from the shards matching `val_pattern`.
std::vector<Batch> validation_set(const RunConfig& config, const std::string& val_pattern);

// Mean validation loss (and perplexity) of `model` over the given batches, or over the config's
// validation windows read from `val_pattern`.
std::pair<double, double> evaluate(nn::TransformerLM& model, const std::vector<Batch>& batches, torch::Device device,
                                   Precision precision);
std::pair<double, double> evaluate(nn::TransformerLM& model, const RunConfig& config, torch::Device device,
                                   const std::string& val_pattern);

// Torch's intra-op threads for a run: train.threads when set, else every core (the device is kept in
// the signature for policies that differ per device).
int intra_op_threads(const TrainConfig& config, torch::Device device);

// Requests a clean stop at the end of the current step (what the signal handlers call); made while
// no run is in progress, it stops the next one after its first step, or ends its wait for the ranks.
void request_stop();
// Whether a stop was requested and no run has acted on it yet (a parallel experiment forwards it).
bool stop_pending();
// SIGINT and SIGTERM call request_stop() from now on (once per process; train() does it too unless
// told not to). A command that does other work before its first run (an experiment profiling a
// finished reference) calls it first, so that a signal then is kept rather than fatal.
void install_stop_handlers();

}  // namespace ffnshape
