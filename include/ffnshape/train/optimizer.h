// AdamW with decoupled weight decay, split into a decayed group (matrices) and an undecayed group
// (norm weights and embeddings, unless the config asks to decay them).
#pragma once

#include <torch/torch.h>

#include <memory>

#include "ffnshape/config/train_config.h"
#include "ffnshape/nn/model.h"

namespace ffnshape {

std::unique_ptr<torch::optim::AdamW> make_optimizer(nn::TransformerLM& model, const OptimizerConfig& config);

// Sets the learning rate of every parameter group.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace ffnshape
