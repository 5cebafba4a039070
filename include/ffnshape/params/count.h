// Analytic parameter and FLOP accounting, from the config alone (no model is built).
//
// Categories partition the parameters: total = embedding + attention + ffn + norm + head.
//   embedding      token embedding (vocab_size x d_model)
//   attention      q, k, v, o projections
//   ffn            gate, up, down of every FFN sub-block
//   norm           every RMSNorm weight: block norms, FFN sub-block norms, QK-norms, final norm
//   head           untied LM head (0 when tied)
//   non_embedding  total - embedding - head: the size label of the hourglass paper
#pragma once

#include <cstdint>

#include "ffnshape/config/model_config.h"

namespace ffnshape {

struct ParamCount {
  int64_t embedding = 0;
  int64_t attention = 0;
  int64_t ffn = 0;
  int64_t norm = 0;
  int64_t head = 0;

  int64_t total() const { return embedding + attention + ffn + norm + head; }
  int64_t non_embedding() const { return attention + ffn + norm; }
  // Shares of the non-embedding parameters.
  double attention_share() const;
  double ffn_share() const;
};

ParamCount count_parameters(const ModelConfig& config);

// Matrix-multiply FLOPs per token for a sequence of `seq_len` tokens, PaLM's convention:
// forward = 2 * (every matmul weight, the LM head included even when tied) + 4 * L * seq * q_width
// (scores and weighted sum over the whole context); training = 3 * forward.
struct FlopCount {
  double forward_per_token = 0;
  double training_per_token = 0;
};

FlopCount count_flops(const ModelConfig& config, int64_t seq_len);

}  // namespace ffnshape
