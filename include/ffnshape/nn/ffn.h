// The FFN stack: K residual SwiGLU sub-blocks, each d_model -> hidden -> d_model with its own norm.
//
//   llama (pre-norm):   r_k = r_{k-1} + W_down(silu(W_gate u) * (W_up u)),  u = RMSNorm_k(r_{k-1})
//   olmo2 (post-norm):  r_k = r_{k-1} + RMSNorm_k(W_down(silu(W_gate r) * (W_up r))),  r = r_{k-1}
//
// Conventional FFN = K 1, hidden = d_ff > d_model; hourglass = K sub-blocks with hidden = d_h < d_model.
// The stack owns the residual connections, so a block's forward is h -> ffn(h).
#pragma once

#include <torch/torch.h>

#include "ffnshape/config/model_config.h"
#include "ffnshape/nn/rms_norm.h"

namespace ffnshape::nn {

class SwiGLUSubBlockImpl : public torch::nn::Module {
 public:
  SwiGLUSubBlockImpl(int64_t d_model, int64_t hidden, Family family, double norm_eps);
  // Returns r + update(r): the residual is included.
  torch::Tensor forward(const torch::Tensor& r);

  RMSNorm norm{nullptr};
  torch::nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
  Family family;
};
TORCH_MODULE(SwiGLUSubBlock);

class FfnStackImpl : public torch::nn::Module {
 public:
  FfnStackImpl(int64_t d_model, int64_t hidden, int64_t k, Family family, double norm_eps);
  // The stack of `layer` as the config describes it (its per-layer width and K).
  FfnStackImpl(const ModelConfig& config, int64_t layer);
  torch::Tensor forward(torch::Tensor r);

  torch::nn::ModuleList sub_blocks;
};
TORCH_MODULE(FfnStack);

}  // namespace ffnshape::nn
