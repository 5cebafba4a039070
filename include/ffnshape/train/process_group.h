// The ranks of a data-parallel job joined through PyTorch's c10d: a TCPStore at the launcher's
// rendezvous (hosted by rank 0, or by torchrun's agent when it runs one) and ProcessGroupGloo for CPU
// tensors. Collectives wait for their result; a rank that does not arrive within the timeout makes the
// others throw DistributedError instead of hanging.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ffnshape/train/distributed_env.h"

namespace ffnshape {

class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ProcessGroup {
 public:
  // Joins the job described by `env` (env.distributed() must hold). CPU only for now.
  ProcessGroup(const DistributedEnv& env, std::chrono::milliseconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int world_size() const;
  void all_reduce_sum(std::vector<torch::Tensor>& tensors);      // in place
  void broadcast(std::vector<torch::Tensor>& tensors, int root);  // in place
  void barrier();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ffnshape
