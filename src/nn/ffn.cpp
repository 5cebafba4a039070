#include "ffnshape/nn/ffn.h"

#include "fused_ops.h"
#include "linear.h"

namespace ffnshape::nn {

SwiGLUSubBlockImpl::SwiGLUSubBlockImpl(int64_t d_model, int64_t hidden, Family family_, double norm_eps)
    : family(family_) {
  norm = register_module("norm", RMSNorm(d_model, norm_eps));
  gate = register_module("gate", linear_no_bias(d_model, hidden));
  up = register_module("up", linear_no_bias(d_model, hidden));
  down = register_module("down", linear_no_bias(hidden, d_model));
}

torch::Tensor SwiGLUSubBlockImpl::forward(const torch::Tensor& r) {
  auto update = [&](const torch::Tensor& u) { return down(swiglu(gate(u), up(u))); };
  if (family == Family::olmo2) return r + norm(update(r));
  return r + update(norm(r));
}

FfnStackImpl::FfnStackImpl(int64_t d_model, int64_t hidden, int64_t k, Family family, double norm_eps) {
  sub_blocks = register_module("sub_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < k; ++i) sub_blocks->push_back(SwiGLUSubBlock(d_model, hidden, family, norm_eps));
}

FfnStackImpl::FfnStackImpl(const ModelConfig& config, int64_t layer)
    : FfnStackImpl(config.d_model, config.ffn_hidden(layer), config.ffn.k, config.family, config.norm_eps) {}

torch::Tensor FfnStackImpl::forward(torch::Tensor r) {
  for (const auto& sub_block : *sub_blocks) r = sub_block->as<SwiGLUSubBlock>()->forward(r);
  return r;
}

}  // namespace ffnshape::nn
