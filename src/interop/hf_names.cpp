#include "hf_names.h"

#include <algorithm>

namespace ffnshape::interop {

std::vector<TensorName> hf_tensor_names(const ModelConfig& m) {
  const bool olmo2 = m.family == Family::olmo2;
  const bool hourglass = m.ffn.kind == FfnKind::hourglass;
  std::vector<TensorName> names = {{"model.embed_tokens.weight", "tok_embeddings.weight"}};
  for (int64_t i = 0; i < m.n_layers; ++i) {
    const std::string hf = "model.layers." + std::to_string(i) + ".";
    const std::string ours = "blocks." + std::to_string(i) + ".";
    names.push_back({hf + (olmo2 ? "post_attention_layernorm" : "input_layernorm") + ".weight", ours + "attn_norm.weight"});
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      names.push_back({hf + "self_attn." + p + ".weight", ours + "attn." + p + ".weight"});
    }
    if (m.qk_norm) {
      for (const char* p : {"q_norm", "k_norm"}) names.push_back({hf + "self_attn." + p + ".weight", ours + "attn." + p + ".weight"});
    }
    for (int64_t k = 0; k < m.ffn.k; ++k) {
      const std::string sub = hourglass ? "." + std::to_string(k) : "";
      const std::string block = ours + "ffn.sub_blocks." + std::to_string(k) + ".";
      names.push_back({hf + (olmo2 ? "post_feedforward_layernorm" : "post_attention_layernorm") + sub + ".weight",
                       block + "norm.weight"});
      for (const char* p : {"gate", "up", "down"}) {
        names.push_back({hf + "mlp" + sub + "." + p + "_proj.weight", block + p + ".weight"});
      }
    }
  }
  names.push_back({"model.norm.weight", "norm.weight"});
  if (!m.tie_embeddings) names.push_back({"lm_head.weight", "lm_head.weight"});
  return names;
}

std::string first_names(const std::vector<std::string>& names) {
  std::string s;
  const size_t shown = std::min<size_t>(names.size(), 6);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
  return s;
}

}  // namespace ffnshape::interop
