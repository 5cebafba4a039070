// Internal to src/interop: a Hugging Face config.json <-> ModelConfig.
//
// Read: LlamaForCausalLM and Olmo2ForCausalLM, GQA, head_dim, rope_theta at the top level or inside
// rope_parameters / rope_scaling (rope types default and llama3), the hourglass paper's keys
// num_mlp_layers and mlp_intermediate_sizes, and ffnshape's own extension (key "ffnshape":
// intermediate_sizes per layer, qk_norm where it differs from the family). What would change the
// computation and ffnshape cannot represent (biases, other activations or rope types, quantization)
// is a DataError naming the key; keys that do not change the computation are listed as ignored.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ffnshape/config/model_config.h"

namespace ffnshape::interop {

struct HfModelConfig {
  ModelConfig model;
  std::string architecture;               // "LlamaForCausalLM" or "Olmo2ForCausalLM"
  std::vector<std::string> ignored_keys;  // keys read and left aside (none of them alters the logits)
};

// `path` names the file in messages.
HfModelConfig model_config_from_hf(const nlohmann::json& config, const std::string& path);

// What stock transformers cannot load of `m` (empty when it can): per-layer widths, hourglass
// sub-blocks, QK-norm on a llama model or none on an olmo2 one, d_model not divisible by n_heads.
std::vector<std::string> hf_extensions_needed(const ModelConfig& m);

// config.json for `m` (dtype: "float32" or "bfloat16"); token ids are written when known (>= 0).
nlohmann::json hf_config_from_model(const ModelConfig& m, const std::string& dtype, int bos_id, int eos_id, int pad_id);

}  // namespace ffnshape::interop
