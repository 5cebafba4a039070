// The trainer's record of a run as it goes: metrics.jsonl (one object per logged step and per
// evaluation), the same values as TensorBoard scalars when log.tensorboard is on, and the console line
// (step, loss, lr, tokens/s, MFU, peak memory, ETA). Internal to the trainer; nothing here touches the
// model.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>

#include "ffnshape/config/run_config.h"
#include "layer_stats.h"
#include "tensorboard_writer.h"

namespace ffnshape {

class ProgressLog {
 public:
  // Opens RUN/metrics.jsonl for appending after dropping the lines past `resumed_step` (those of a run
  // interrupted after its last checkpoint, which the resumed run is about to repeat), and with
  // log.tensorboard RUN/tb/'s event file the same way (a new run's starts with the resolved config and
  // the shape as text). An empty path (the ranks other than 0) records nothing. Tokens/s and MFU count
  // all `world_size` ranks.
  ProgressLog(const std::filesystem::path& metrics_path, int64_t resumed_step, const RunConfig& config,
              torch::Device device, int world_size, double elapsed_before, bool quiet);

  // Counts one finished optimizer step; on logging steps writes its line and returns true.
  bool step(int64_t step, double loss, double lr, double grad_norm);
  void eval(int64_t step, double val_loss, double val_ppl);
  // The step's per-layer statistics: {"step", "layers": {name: [per layer]}} in metrics.jsonl and
  // TensorBoard scalars "name/layer_NN".
  void layers(int64_t step, const LayerStats& stats);

  double mfu() const { return mfu_; }  // of the latest logged window
  double elapsed_s() const;            // of the whole run, earlier processes included

 private:
  using Clock = std::chrono::steady_clock;
  std::ofstream metrics_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;  // with log.tensorboard, on rank 0
  const RunConfig& config_;
  torch::Device device_;
  bool quiet_;
  bool recording_;
  double flops_per_token_ = 0, peak_flops_ = 0;
  int64_t tokens_per_step_ = 0;
  double elapsed_before_ = 0;
  Clock::time_point run_start_ = Clock::now(), window_start_ = Clock::now();
  int64_t window_tokens_ = 0;
  double mfu_ = 0;
};

}  // namespace ffnshape
