// Internal to src/nn: every projection in the model is a bias-free linear layer.
#pragma once

#include <torch/torch.h>

namespace ffnshape::nn {

inline torch::nn::Linear linear_no_bias(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

}  // namespace ffnshape::nn
