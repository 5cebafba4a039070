// RMSNorm: x / sqrt(mean(x^2) + eps) * weight, computed in fp32 and returned in x's dtype; except
// that under CPU autocast to bf16 an fp32 x gives the result in bf16, rounded once, as the matrix
// products a norm feeds would round it (the model's norms all feed products).
#pragma once

#include <torch/torch.h>

namespace ffnshape::nn {

class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight;
  double eps;
};
TORCH_MODULE(RMSNorm);

}  // namespace ffnshape::nn
