#include "ffnshape/nn/rms_norm.h"

namespace ffnshape::nn {

RMSNormImpl::RMSNormImpl(int64_t dim, double eps_) : eps(eps_) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  const auto xf = x.to(torch::kFloat);
  const auto normed = xf * torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (normed * weight.to(torch::kFloat)).to(x.scalar_type());
}

}  // namespace ffnshape::nn
