#include "hf_config.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ffnshape/train/data_error.h"

namespace ffnshape::interop {
namespace {

using nlohmann::json;

// Keys that describe training, generation or bookkeeping, never the forward pass.
const std::set<std::string>& harmless_keys() {
  static const std::set<std::string> keys = {
      "architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "bos_token_id", "eos_token_id",
      "pad_token_id", "use_cache", "initializer_range", "attention_dropout", "pretraining_tp", "_name_or_path",
      "output_attentions", "output_hidden_states", "return_dict", "tie_word_embeddings", "max_position_embeddings",
      "hidden_act", "attention_bias", "mlp_bias", "rope_theta", "rope_scaling", "rope_parameters", "head_dim",
      "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
      "rms_norm_eps", "vocab_size", "num_mlp_layers", "mlp_intermediate_sizes", "ffnshape"};
  return keys;
}

struct Reader {
  const json& config;
  const std::string& path;

  [[noreturn]] void refuse(const std::string& key, const std::string& problem, const std::string& fix) const {
    throw DataError("'" + path + "': " + key + " " + problem + "\n  fix: " + fix);
  }
  bool has(const char* key) const { return config.contains(key) && !config[key].is_null(); }
  int64_t integer(const char* key) const {
    if (!has(key)) refuse(key, "is missing", "a config.json saved by transformers has it; add it");
    if (!config[key].is_number_integer()) refuse(key, "is not an integer", "write it as an integer");
    return config[key].get<int64_t>();
  }
  int64_t integer(const char* key, int64_t fallback) const { return has(key) ? integer(key) : fallback; }
  double number(const json& j, const std::string& key, double fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_number()) refuse(key, "is not a number", "write it as a number");
    return j[key].get<double>();
  }
  bool flag(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!config[key].is_boolean()) refuse(key, "is not true or false", "write true or false");
    return config[key].get<bool>();
  }
};

std::string architecture_of(const Reader& r) {
  std::string found;
  if (r.has("architectures") && r.config["architectures"].is_array() && !r.config["architectures"].empty()) {
    found = r.config["architectures"][0].is_string() ? r.config["architectures"][0].get<std::string>() : "?";
  } else if (r.has("model_type") && r.config["model_type"].is_string()) {
    const auto type = r.config["model_type"].get<std::string>();
    found = type == "llama" ? "LlamaForCausalLM" : type == "olmo2" ? "Olmo2ForCausalLM" : "model_type " + type;
  }
  if (found != "LlamaForCausalLM" && found != "Olmo2ForCausalLM") {
    r.refuse("architectures", "names '" + (found.empty() ? std::string("nothing") : found) + "', which ffnshape does not import",
             "ffnshape imports LlamaForCausalLM and Olmo2ForCausalLM (Llama-, SmolLM-, TinyLlama-, OLMo-2-style models)");
  }
  return found;
}

// What ffnshape cannot compute: refused with the key that asks for it.
void refuse_unsupported(const Reader& r) {
  if (r.flag("attention_bias", false)) r.refuse("attention_bias", "is true", "ffnshape's projections have no biases");
  if (r.flag("mlp_bias", false)) r.refuse("mlp_bias", "is true", "ffnshape's projections have no biases");
  if (r.has("hidden_act") && r.config["hidden_act"] != "silu") {
    r.refuse("hidden_act", "is " + r.config["hidden_act"].dump(), "ffnshape's FFN is SwiGLU (silu)");
  }
  for (const char* key : {"quantization_config", "sliding_window", "partial_rotary_factor", "layer_types"}) {
    if (r.has(key)) r.refuse(key, "is set", "ffnshape computes full-precision, full-window, full-rotary attention");
  }
}

void read_rope(const Reader& r, ModelConfig& m, int64_t max_positions) {
  json rope = r.has("rope_scaling") ? r.config["rope_scaling"] : r.has("rope_parameters") ? r.config["rope_parameters"] : json::object();
  const char* key = r.has("rope_scaling") ? "rope_scaling" : "rope_parameters";
  if (!rope.is_object()) r.refuse(key, "is not an object", "write {\"rope_type\": \"default\", \"rope_theta\": ...}");
  m.rope_theta = r.number(rope, "rope_theta", r.number(r.config, "rope_theta", 10000.0));
  const json type = rope.contains("rope_type") ? rope["rope_type"] : rope.contains("type") ? rope["type"] : json("default");
  if (type == "default") return;
  if (type != "llama3") {
    r.refuse(std::string(key) + ".rope_type", "is " + type.dump(), "ffnshape supports the rope types default and llama3");
  }
  RopeScaling s;
  s.factor = r.number(rope, "factor", s.factor);
  s.low_freq_factor = r.number(rope, "low_freq_factor", s.low_freq_factor);
  s.high_freq_factor = r.number(rope, "high_freq_factor", s.high_freq_factor);
  s.original_max_seq_len = static_cast<int64_t>(r.number(rope, "original_max_position_embeddings", static_cast<double>(max_positions)));
  m.rope_scaling = s;
}

// The FFN: conventional (intermediate_size), hourglass (num_mlp_layers, mlp_intermediate_sizes), and
// per-layer widths from ffnshape's extension.
void read_ffn(const Reader& r, ModelConfig& m) {
  const json ext = r.has("ffnshape") ? r.config["ffnshape"] : json::object();
  if (!ext.is_object()) r.refuse("ffnshape", "is not an object", "see README, Import and export, for its keys");
  for (const auto& item : ext.items()) {
    if (item.key() != "intermediate_sizes" && item.key() != "qk_norm") {
      r.refuse("ffnshape." + item.key(), "is not a key ffnshape knows", "remove it (known: intermediate_sizes, qk_norm)");
    }
  }
  if (ext.contains("qk_norm")) m.qk_norm = ext["qk_norm"].get<bool>();
  if (r.has("num_mlp_layers")) {
    m.ffn.kind = FfnKind::hourglass;
    m.ffn.k = r.integer("num_mlp_layers");
    const json sizes = r.has("mlp_intermediate_sizes") ? r.config["mlp_intermediate_sizes"] : json::array();
    if (!sizes.is_array() || static_cast<int64_t>(sizes.size()) != m.ffn.k) {
      r.refuse("mlp_intermediate_sizes", "does not list num_mlp_layers widths", "give one width per sub-block");
    }
    const auto widths = sizes.get<std::vector<int64_t>>();
    if (std::adjacent_find(widths.begin(), widths.end(), std::not_equal_to<>()) != widths.end()) {
      r.refuse("mlp_intermediate_sizes", "holds different widths", "ffnshape's sub-blocks of one layer share one width");
    }
    m.ffn.hidden = widths.empty() ? 0 : widths[0];
  } else {
    m.ffn.hidden = r.integer("intermediate_size");
  }
  if (ext.contains("intermediate_sizes")) {
    m.ffn.widths = ext["intermediate_sizes"].get<std::vector<int64_t>>();
    m.ffn.hidden.reset();
  }
}

}  // namespace

HfModelConfig model_config_from_hf(const json& config, const std::string& path) {
  if (!config.is_object()) throw DataError("'" + path + "' is not a JSON object\n  fix: give a transformers config.json");
  const Reader r{config, path};
  HfModelConfig out;
  out.architecture = architecture_of(r);
  refuse_unsupported(r);
  const bool olmo2 = out.architecture == "Olmo2ForCausalLM";
  auto& m = out.model;
  m = ModelConfig::defaults_for(olmo2 ? Family::olmo2 : Family::llama);
  m.vocab_size = r.integer("vocab_size");
  m.d_model = r.integer("hidden_size");
  m.n_layers = r.integer("num_hidden_layers");
  m.n_heads = r.integer("num_attention_heads");
  const int64_t kv = r.integer("num_key_value_heads", m.n_heads);
  if (kv != m.n_heads) m.n_kv_heads = kv;
  const int64_t head_dim = r.integer("head_dim", m.d_model / std::max<int64_t>(m.n_heads, 1));
  if (head_dim * m.n_heads != m.d_model) m.head_dim = head_dim;
  m.qk_norm = olmo2;
  m.tie_embeddings = r.flag("tie_word_embeddings", false);
  m.norm_eps = r.number(config, "rms_norm_eps", olmo2 ? 1e-5 : 1e-6);  // the transformers defaults
  m.max_seq_len = r.integer("max_position_embeddings", 2048);
  read_rope(r, m, m.max_seq_len);
  read_ffn(r, m);
  try {
    validate(m);
  } catch (const ConfigError& e) {
    throw DataError("'" + path + "' describes a model ffnshape cannot build: " + e.path() + " " + e.problem() +
                    "\n  fix: " + e.hint());
  }
  for (const auto& item : config.items()) {
    if (!harmless_keys().count(item.key())) out.ignored_keys.push_back(item.key());
  }
  return out;
}

std::vector<std::string> hf_extensions_needed(const ModelConfig& m) {
  std::vector<std::string> reasons;
  if (!m.ffn.widths.empty()) reasons.push_back("per-layer FFN widths (ffnshape.intermediate_sizes)");
  if (m.ffn.kind == FfnKind::hourglass) reasons.push_back("hourglass sub-blocks (num_mlp_layers, mlp.{k}.* tensors)");
  if (m.qk_norm != (m.family == Family::olmo2)) reasons.push_back("qk_norm differs from the family (ffnshape.qk_norm)");
  if (m.d_model % m.n_heads != 0) reasons.push_back("hidden_size is not divisible by num_attention_heads");
  return reasons;
}

json hf_config_from_model(const ModelConfig& m, const std::string& dtype, int bos_id, int eos_id, int pad_id) {
  const bool olmo2 = m.family == Family::olmo2;
  int64_t widest = 0;
  for (int64_t l = 0; l < m.n_layers; ++l) widest = std::max(widest, m.ffn_hidden(l));
  json rope = {{"rope_type", "default"}, {"rope_theta", m.rope_theta}};
  if (m.rope_scaling) {
    rope = {{"rope_type", "llama3"}, {"rope_theta", m.rope_theta}, {"factor", m.rope_scaling->factor},
            {"low_freq_factor", m.rope_scaling->low_freq_factor}, {"high_freq_factor", m.rope_scaling->high_freq_factor},
            {"original_max_position_embeddings", m.rope_scaling->original_max_seq_len}};
  }
  json c = {{"architectures", json::array({olmo2 ? "Olmo2ForCausalLM" : "LlamaForCausalLM"})},
            {"model_type", olmo2 ? "olmo2" : "llama"},
            {"vocab_size", m.vocab_size},
            {"hidden_size", m.d_model},
            {"intermediate_size", widest},
            {"num_hidden_layers", m.n_layers},
            {"num_attention_heads", m.n_heads},
            {"num_key_value_heads", m.kv_heads()},
            {"head_dim", m.attn_head_dim()},
            {"hidden_act", "silu"},
            {"max_position_embeddings", m.max_seq_len},
            {"rms_norm_eps", m.norm_eps},
            {"tie_word_embeddings", m.tie_embeddings},
            {"attention_bias", false},
            {"rope_theta", m.rope_theta},  // older transformers read these two; newer ones rope_parameters
            {"rope_scaling", m.rope_scaling ? rope : json(nullptr)},
            {"rope_parameters", rope},
            {"dtype", dtype},
            {"bos_token_id", bos_id >= 0 ? json(bos_id) : json(nullptr)},
            {"eos_token_id", eos_id >= 0 ? json(eos_id) : json(nullptr)},
            {"pad_token_id", pad_id >= 0 ? json(pad_id) : json(nullptr)}};
  if (!olmo2) c["mlp_bias"] = false;
  if (m.ffn.kind == FfnKind::hourglass) {
    c["num_mlp_layers"] = m.ffn.k;
    c["mlp_intermediate_sizes"] = std::vector<int64_t>(static_cast<size_t>(m.ffn.k), widest);
  }
  json ext = json::object();
  if (!m.ffn.widths.empty()) ext["intermediate_sizes"] = m.ffn.widths;
  if (m.qk_norm != olmo2) ext["qk_norm"] = m.qk_norm;
  if (!ext.empty()) c["ffnshape"] = ext;
  return c;
}

}  // namespace ffnshape::interop
