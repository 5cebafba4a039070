// Autoregressive decoding of a TransformerLM: greedy (temperature 0) or sampled with temperature,
// top-k and top-p (nucleus) filtering, from a seeded generator so that a seed gives the same tokens.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "ffnshape/nn/model.h"

namespace ffnshape::nn {

struct SamplingOptions {
  int64_t max_tokens = 64;            // new tokens at most
  double temperature = 0;             // 0: greedy (the most likely token)
  int64_t top_k = 0;                  // > 0: sample among the k most likely tokens only
  double top_p = 1;                   // < 1: sample among the fewest tokens whose probability sums to p
  uint64_t seed = 0;
  std::optional<int64_t> stop_token;  // ends generation once produced (kept in the output)
  bool use_cache = true;              // false: recompute the whole sequence for every token (a check)
};

// The tokens generated after `prompt` (not including it). The prompt plus max_tokens must fit
// model.max_seq_len (std::invalid_argument otherwise). Runs on the model's device, in eval mode,
// without gradients.
std::vector<int64_t> generate(TransformerLM& model, const std::vector<int64_t>& prompt, const SamplingOptions& options);

// The next token from one row of logits under the options (exposed for tests).
int64_t sample_token(const torch::Tensor& logits, const SamplingOptions& options, torch::Generator& generator);

}  // namespace ffnshape::nn
