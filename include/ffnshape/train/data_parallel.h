// Data parallelism over a ProcessGroup, independent of the model's structure: the same weights on
// every rank at the start, and gradients summed across ranks in flattened buckets (one collective per
// bucket rather than one per tensor), started while backward is still running.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>

#include "ffnshape/train/process_group.h"

namespace ffnshape {

// Copies rank 0's parameters and buffers to every rank.
void broadcast_parameters(torch::nn::Module& model, ProcessGroup& group);

// Sums gradients across ranks as backward produces them. Parameters are packed, last registered
// first (about the order in which backward finishes them), into flat buckets of about `bucket_bytes`
// of one dtype (the first of at most 1 MB, as in DistributedDataParallel, to start early); a tensor larger than a bucket travels alone. Once armed, a backward pass starts each
// bucket's all-reduce as soon as its last gradient has been accumulated, buckets always in the same
// order on every rank, so communication overlaps the rest of backward. Backward passes that are not
// armed (the earlier micro-steps of gradient accumulation) do not communicate.
// With `shard` (ZeRO-1), each bucket is reduce-scattered instead: every rank receives the summed
// gradient of its own 1/R slice of the bucket (see ShardedAdamW), and the parameters' own gradients
// stay this rank's.
class GradientSync {
 public:
  // overlap = false starts every bucket in finish(), after backward (to measure what overlap hides).
  GradientSync(torch::nn::Module& model, ProcessGroup& group, int64_t bucket_bytes = int64_t{25} << 20,
               bool shard = false, bool overlap = true);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // The next backward pass communicates (call it before the last micro-step's backward).
  void arm();
  // Starts the buckets backward did not complete (parameters without a gradient count as zeros),
  // waits for all, and writes sum * scale into every gradient (sharded: into this rank's slices).
  // Disarms.
  void finish(double scale = 1.0);

  int64_t buckets() const;
  double exposed_wait_s() const;  // time finish() spent waiting for collectives, summed over calls

 private:
  friend class ShardedAdamW;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ZeRO-1, as in llm.c: AdamW whose moments are split over the ranks. Each rank keeps the moments of
// its slices of a sharding GradientSync's buckets, updates those slices of the weights from the
// reduce-scattered gradient sums, and all-gathers the slices into every rank's weights. The update is
// torch::optim::AdamW's, element for element; parameter groups may differ in weight decay only.
// Checkpoints hold the whole state in AdamW's own format, so they load at any world size and without
// sharding: gather_state() fills state() on every rank before a save, release_state() frees it after.
class ShardedAdamW : public torch::optim::AdamW {
 public:
  // The groups and options of `like`, whose state (a loaded checkpoint's moments) it takes over.
  ShardedAdamW(torch::optim::AdamW& like, GradientSync& sync);
  ~ShardedAdamW() override;

  torch::Tensor step(LossClosure closure = nullptr) override;
  // Scales the gradient slices so that the norm of the whole gradient is at most max_norm (as
  // torch::nn::utils::clip_grad_norm_ does) and returns the norm before scaling.
  double clip_grad_norm(double max_norm);
  void gather_state();   // a collective: every rank calls it
  void release_state();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The same sum without backward: every gradient (zeros where a parameter has none), summed across
// ranks and times `scale` (1 / world size for a mean), in buckets as above.
void all_reduce_gradients(torch::nn::Module& model, ProcessGroup& group, double scale,
                          int64_t bucket_bytes = int64_t{25} << 20);

}  // namespace ffnshape
