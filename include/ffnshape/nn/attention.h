// Causal self-attention: MHA or GQA (n_kv_heads), inner width n_heads * head_dim independent of
// d_model, optional QK-norm (one RMSNorm over the whole q projection and one over the whole k
// projection, before the head split), rotary positions, no biases.
#pragma once

#include <torch/torch.h>

#include "ffnshape/config/model_config.h"
#include "ffnshape/nn/rms_norm.h"
#include "ffnshape/nn/rope.h"

namespace ffnshape::nn {

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const ModelConfig& config);
  // x: (batch, seq, d_model) -> (batch, seq, d_model)
  torch::Tensor forward(const torch::Tensor& x);
  // The same for x following the positions whose keys and values `keys` / `values` hold (both
  // undefined at the start); appends x's own to them.
  torch::Tensor forward_cached(const torch::Tensor& x, torch::Tensor& keys, torch::Tensor& values);

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};
  RMSNorm q_norm{nullptr}, k_norm{nullptr};  // registered only with qk_norm
  RotaryEmbedding rope{nullptr};
  int64_t n_heads, n_kv_heads, head_dim;
};
TORCH_MODULE(CausalSelfAttention);

}  // namespace ffnshape::nn
