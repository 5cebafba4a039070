// Keys and values of the positions a model has already seen, per layer, for decoding one token at a
// time without recomputing the prefix. Filled by TransformerLM::forward_cached.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace ffnshape::nn {

struct KvCache {
  std::vector<torch::Tensor> keys, values;  // per layer: (batch, kv_heads, positions, head_dim)
  int64_t length() const { return keys.empty() || !keys.front().defined() ? 0 : keys.front().size(2); }
  void clear() {
    keys.clear();
    values.clear();
  }
};

}  // namespace ffnshape::nn
