#include "ffnshape/nn/attention.h"

#include "ffnshape/compat.h"
#include "causal_attention_cpu.h"
#include "linear.h"

namespace ffnshape::nn {
CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelConfig& config)
    : n_heads(config.n_heads), n_kv_heads(config.kv_heads()), head_dim(config.attn_head_dim()) {
  q_proj = register_module("q_proj", linear_no_bias(config.d_model, config.q_width()));
  k_proj = register_module("k_proj", linear_no_bias(config.d_model, config.kv_width()));
  v_proj = register_module("v_proj", linear_no_bias(config.d_model, config.kv_width()));
  o_proj = register_module("o_proj", linear_no_bias(config.q_width(), config.d_model));
  if (config.qk_norm) {
    q_norm = register_module("q_norm", RMSNorm(config.q_width(), config.norm_eps));
    k_norm = register_module("k_norm", RMSNorm(config.kv_width(), config.norm_eps));
  }
  rope = register_module("rope", RotaryEmbedding(head_dim, config.max_seq_len, config.rope_theta, config.rope_scaling));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x) {
  torch::Tensor keys, values;
  return forward_cached(x, keys, values);
}

torch::Tensor CausalSelfAttentionImpl::forward_cached(const torch::Tensor& x, torch::Tensor& keys,
                                                      torch::Tensor& values) {
  const auto batch = x.size(0), seq = x.size(1);
  const int64_t offset = keys.defined() ? keys.size(2) : 0;
  auto q = q_proj(x), k = k_proj(x), v = v_proj(x);
  if (q_norm) {
    q = q_norm(q);
    k = k_norm(k);
  }
  auto heads = [&](const torch::Tensor& t, int64_t count) {
    return t.view({batch, seq, count, head_dim}).transpose(1, 2);
  };
  q = rope(heads(q, n_heads), offset);
  k = rope(heads(k, n_kv_heads), offset);
  v = heads(v, n_kv_heads);
  if (offset == 0) {
    keys = k;
    values = v;
  } else {
    keys = torch::cat({keys, k}, 2);
    values = torch::cat({values, v}, 2);
  }
  // Grouped-query heads are shared inside the kernel.
  auto y = offset == 0 ? causal_attention(q, k, v) : compat::cached_attention(q, keys, values);
  return o_proj(y.transpose(1, 2).reshape({batch, seq, n_heads * head_dim}));
}

}  // namespace ffnshape::nn
