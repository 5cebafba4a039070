// One transformer layer; a family flag chooses where the norms go.
//
//   llama:  h = x + Attn(RMSNorm(x));  out = FFN(h)      (pre-norm)
//   olmo2:  h = x + RMSNorm(Attn(x));  out = FFN(h)      (norm on the sub-layer output)
//
// FFN is the residual stack of nn/ffn.h, which applies the family's norm placement per sub-block.
#pragma once

#include <torch/torch.h>

#include "ffnshape/config/model_config.h"
#include "ffnshape/nn/attention.h"
#include "ffnshape/nn/ffn.h"
#include "ffnshape/nn/rms_norm.h"

namespace ffnshape::nn {

class TransformerBlockImpl : public torch::nn::Module {
 public:
  TransformerBlockImpl(const ModelConfig& config, int64_t layer);
  torch::Tensor forward(const torch::Tensor& x);
  // After the positions whose keys and values the cache slots hold; appends to them.
  torch::Tensor forward_cached(const torch::Tensor& x, torch::Tensor& keys, torch::Tensor& values);
  // The residual stream between attention and the FFN stack (what the FFN receives).
  torch::Tensor attend(const torch::Tensor& x);

  RMSNorm attn_norm{nullptr};
  CausalSelfAttention attn{nullptr};
  FfnStack ffn{nullptr};
  Family family;
};
TORCH_MODULE(TransformerBlock);

}  // namespace ffnshape::nn
