// The trainer's one view of the other ranks of a data-parallel job. In a single process (a world of
// one) there is no process group and every call is free and changes nothing, so the training loop
// reads the same either way. Internal to the trainer.
#pragma once

#include <torch/torch.h>

#include <memory>

#include "ffnshape/config/train_config.h"
#include "ffnshape/train/data_parallel.h"
#include "ffnshape/train/distributed_env.h"
#include "ffnshape/train/process_group.h"

namespace ffnshape {

class Ranks {
 public:
  // Joins the job `env` describes (nothing to join for a world of one) for training on `requested`:
  // a CUDA request means the GPU of this rank's local rank, and NCCL; the CPU means Gloo.
  // join_timeout_s > 0: how long to wait for the other ranks to arrive (default: the collective timeout).
  // `cancelled` ends that wait early (see ProcessGroup).
  Ranks(const DistributedEnv& env, const TrainConfig& config, torch::Device requested, double join_timeout_s = 0,
        const std::function<bool()>& cancelled = {});

  int rank() const { return env_.rank; }
  int world() const { return env_.world_size; }
  bool is_root() const { return env_.rank == 0; }
  torch::Device device() const { return device_; }  // this rank's

  // Rank 0's weights everywhere, then gradient sums hooked into the model's backward. With
  // train.zero: 1 the optimizer becomes a ShardedAdamW that takes over its (loaded) state.
  void attach(torch::nn::Module& model, std::unique_ptr<torch::optim::AdamW>& optimizer);
  double sum(double value);  // across ranks
  std::vector<double> sum(std::vector<double> values);  // several numbers in one collective
  // Every rank must stand at the same step (the run directory is shared); DistributedError if not.
  void check_same_step(int64_t step);
  // Rank 0 says whether it could start (e.g. take the run directory's lock); every other rank learns
  // it at once and stops with a DistributedError instead of waiting for a collective that never comes.
  void share_root_start(bool root_failed);
  void before_last_backward();   // the coming backward starts the gradient all-reduce
  void finish_gradients();       // waits for it; gradients are then the sums over ranks
  // Clips the whole gradient (every rank's slices, under ZeRO-1) to max_norm; returns its norm.
  double clip_gradients(torch::nn::Module& model, double max_norm);
  // Around a checkpoint save (every rank calls both): ZeRO-1 gathers the whole optimizer state.
  void before_save();
  void after_save();
  double exposed_wait_s() const;  // time spent waiting for gradients after backward

 private:
  DistributedEnv env_;
  torch::Device device_;
  int64_t bucket_bytes_;
  bool zero_, overlap_;
  ShardedAdamW* sharded_ = nullptr;  // the run's optimizer under ZeRO-1
  std::unique_ptr<ProcessGroup> group_;
  std::unique_ptr<GradientSync> sync_;
};

}  // namespace ffnshape
