// The ranks of a data-parallel job joined through PyTorch's c10d: a TCPStore at the launcher's
// rendezvous (hosted by rank 0, or by torchrun's agent when it runs one), and ProcessGroupGloo for CPU
// tensors or ProcessGroupNCCL for CUDA tensors. A collective that fails (a rank died) or does not finish within the timeout (a rank hangs)
// throws DistributedError instead of hanging; the message names the ranks that no longer answer.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ffnshape/train/distributed_env.h"

namespace ffnshape {

class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The job could not be joined at all (rendezvous address unreachable, port taken, ranks missing):
// a problem with how the ranks were launched rather than with training.
class RendezvousError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

// A collective in flight. wait() blocks until it is done and throws DistributedError if it failed.
class PendingCollective {
 public:
  PendingCollective() = default;
  explicit PendingCollective(std::function<void()> wait) : wait_(std::move(wait)) {}
  void wait() {
    if (wait_) std::exchange(wait_, nullptr)();
  }

 private:
  std::function<void()> wait_;
};

class ProcessGroup {
 public:
  // Joins the job described by `env` (env.distributed() must hold) for tensors on `device`: Gloo for
  // the CPU, NCCL for a CUDA device (this rank's GPU, made current). Collectives fail after `timeout`;
  // joining waits up to `join_timeout` for the other ranks (zero: `timeout`), RendezvousError after it;
  // `cancelled`, polled meanwhile, ends the wait early with DistributedError (a SIGTERM must not wait
  // out a long join).
  ProcessGroup(const DistributedEnv& env, std::chrono::milliseconds timeout, torch::Device device = torch::kCPU,
               std::chrono::milliseconds join_timeout = std::chrono::milliseconds(0),
               const std::function<bool()>& cancelled = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int world_size() const;
  torch::Device device() const;  // where the tensors of its collectives live
  void all_reduce_sum(std::vector<torch::Tensor>& tensors);      // in place
  PendingCollective all_reduce_sum_async(std::vector<torch::Tensor>& tensors);  // in place, started now
  void broadcast(std::vector<torch::Tensor>& tensors, int root);  // in place
  // `input` (world_size * n elements) summed across ranks; this rank's n-element slice into `output`.
  void reduce_scatter_sum(torch::Tensor& output, torch::Tensor& input);
  PendingCollective reduce_scatter_sum_async(torch::Tensor& output, torch::Tensor& input);
  // Every rank's n-element `input`, in rank order, into `output` (world_size * n elements).
  void all_gather(torch::Tensor& output, torch::Tensor& input);
  void barrier();
  // The sum of one number across ranks (token counts, losses, flags).
  double sum(double value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ffnshape
