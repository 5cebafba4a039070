// Learning rate at a step: linear warmup to optimizer.lr, then the configured decay to min_lr.
#pragma once

#include <cstdint>

#include "ffnshape/config/train_config.h"

namespace ffnshape {

// step is 0-based; total_steps is train.steps.
//   warmup  (step < W):  lr * (step + 1) / W
//   cosine:  min + (lr - min) * (1 + cos(pi p)) / 2,  p = (step - W) / (total - W)
//   linear:  lr + (min - lr) * p
//   wsd:     lr until the last decay_fraction of all steps, then linear to min over them
//   constant: lr
double learning_rate(const OptimizerConfig& config, int64_t step, int64_t total_steps);

}  // namespace ffnshape
