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

torch::Tensor TransformerBlockImpl::forward_cached(const torch::Tensor& x, torch::Tensor& keys, torch::Tensor& values) {
  if (family == Family::olmo2) return ffn(x + attn_norm(attn->forward_cached(x, keys, values)));
  return ffn(x + attn->forward_cached(attn_norm(x), keys, values));
}

}  // namespace ffnshape::nn
