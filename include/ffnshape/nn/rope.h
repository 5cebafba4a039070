// Rotary position embeddings (RoPE), half-split ("rotate half") layout: the first and second halves of
// each head form the (real, imaginary) pairs. Optional Llama-3 frequency scaling for long contexts.
#pragma once

#include <torch/torch.h>

#include <optional>

#include "ffnshape/config/model_config.h"

namespace ffnshape::nn {

// Inverse frequencies theta^(-2i/d), i = 0..d/2-1, after Llama-3 scaling when given.
torch::Tensor rope_inverse_frequencies(int64_t head_dim, double theta,
                                       const std::optional<RopeScaling>& scaling = std::nullopt);

class RotaryEmbeddingImpl : public torch::nn::Module {
 public:
  RotaryEmbeddingImpl(int64_t head_dim, int64_t max_seq_len, double theta,
                      const std::optional<RopeScaling>& scaling = std::nullopt);
  // x: (batch, heads, seq, head_dim) at positions offset .. offset + seq - 1 (< max_seq_len).
  torch::Tensor forward(const torch::Tensor& x, int64_t offset = 0);

  torch::Tensor cos, sin;  // (max_seq_len, head_dim / 2) buffers, moved with the module
};
TORCH_MODULE(RotaryEmbedding);

}  // namespace ffnshape::nn
