#include "ffnshape/params/count.h"

namespace ffnshape {

double ParamCount::attention_share() const {
  return non_embedding() > 0 ? static_cast<double>(attention) / static_cast<double>(non_embedding()) : 0.0;
}

double ParamCount::ffn_share() const {
  return non_embedding() > 0 ? static_cast<double>(ffn) / static_cast<double>(non_embedding()) : 0.0;
}

namespace {

// Sum over layers of each layer's FFN hidden width (uniform widths need no loop: the solver calls
// this millions of times).
int64_t total_ffn_hidden(const ModelConfig& c) {
  if (c.ffn.widths.empty()) return c.n_layers * c.ffn_uniform_hidden();
  int64_t sum = 0;
  for (auto w : c.ffn.widths) sum += w;
  return sum;
}

}  // namespace

ParamCount count_parameters(const ModelConfig& c) {
  const int64_t d = c.d_model, L = c.n_layers, K = c.ffn.k;
  const int64_t q = c.q_width(), kv = c.kv_width();
  ParamCount count;
  count.embedding = c.vocab_size * d;
  count.head = c.tie_embeddings ? 0 : c.vocab_size * d;
  count.attention = L * (d * q + 2 * d * kv + q * d);
  count.ffn = K * 3 * d * total_ffn_hidden(c);
  const int64_t per_layer_norm = d /* attention norm */ + K * d /* sub-block norms */ + (c.qk_norm ? q + kv : 0);
  count.norm = L * per_layer_norm + d /* final norm */;
  return count;
}

FlopCount count_flops(const ModelConfig& c, int64_t seq_len) {
  const auto params = count_parameters(c);
  const double matmul_weights = static_cast<double>(params.attention + params.ffn) +
                                static_cast<double>(c.vocab_size) * static_cast<double>(c.d_model);
  FlopCount flops;
  flops.forward_per_token = 2.0 * matmul_weights + 4.0 * static_cast<double>(c.n_layers) *
                                                        static_cast<double>(seq_len) * static_cast<double>(c.q_width());
  flops.training_per_token = 3.0 * flops.forward_per_token;
  return flops;
}

}  // namespace ffnshape
