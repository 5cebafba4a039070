#include "ffnshape/nn/block.h"

namespace ffnshape::nn {

TransformerBlockImpl::TransformerBlockImpl(const ModelConfig& config, int64_t layer) : family(config.family) {
  attn_norm = register_module("attn_norm", RMSNorm(config.d_model, config.norm_eps));
  attn = register_module("attn", CausalSelfAttention(config));
  ffn = register_module("ffn", FfnStack(config, layer));
}

torch::Tensor TransformerBlockImpl::attend(const torch::Tensor& x) {
  if (family == Family::olmo2) return x + attn_norm(attn(x));
  return x + attn(attn_norm(x));
}

torch::Tensor TransformerBlockImpl::forward(const torch::Tensor& x) { return ffn(attend(x)); }

}  // namespace ffnshape::nn
