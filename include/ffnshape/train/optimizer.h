// AdamW with decoupled weight decay, split into a decayed group (matrices) and an undecayed group
// (norm weights and embeddings, unless the config asks to decay them).
#pragma once

#include <torch/torch.h>

#include <memory>

#include "ffnshape/config/train_config.h"
#include "ffnshape/nn/model.h"

namespace ffnshape {

// torch::optim::AdamW whose step() runs LibTorch's fused AdamW kernel (one kernel for all tensors of
// a group, the operator behind torch.optim.AdamW(fused=True); CPU and CUDA). Same state, same
// checkpoints: a run may switch between fused and per-tensor steps on resume.
class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

// optimizer.fused decides between FusedAdamW and torch::optim::AdamW; `auto` fuses on CUDA only
// (see README, Speed, for the CPU measurement behind that choice).
std::unique_ptr<torch::optim::AdamW> make_optimizer(nn::TransformerLM& model, const OptimizerConfig& config,
                                                    torch::Device device = torch::kCPU);

// Sets the learning rate of every parameter group.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace ffnshape
