// Internal to src/interop: how each TransformerLM parameter is named in a Hugging Face folder.
//
//   ffnshape                               Hugging Face (llama)                     (olmo2)
//   tok_embeddings.weight                  model.embed_tokens.weight
//   blocks.i.attn_norm.weight              model.layers.i.input_layernorm.weight   post_attention_layernorm
//   blocks.i.attn.{q,k,v,o}_proj.weight    model.layers.i.self_attn.{q,k,v,o}_proj.weight
//   blocks.i.attn.{q,k}_norm.weight        model.layers.i.self_attn.{q,k}_norm.weight
//   blocks.i.ffn.sub_blocks.k.norm.weight  model.layers.i.post_attention_layernorm[.k].weight
//                                                                                   post_feedforward_layernorm[.k]
//   blocks.i.ffn.sub_blocks.k.gate.weight  model.layers.i.mlp[.k].gate_proj.weight (up, down alike)
//   norm.weight                            model.norm.weight
//   lm_head.weight                         lm_head.weight (absent when tied)
//
// The ".k" of the FFN names appears for hourglass models only (the hourglass paper's public format).
#pragma once

#include <string>
#include <vector>

#include "ffnshape/config/model_config.h"

namespace ffnshape::interop {

struct TensorName {
  std::string hf;    // name in the safetensors file
  std::string ours;  // name in TransformerLM::named_parameters()
};

// Every parameter of a TransformerLM built from `config`, in model order.
std::vector<TensorName> hf_tensor_names(const ModelConfig& config);

// "a, b, c, d, e, f and 3 more": the first names of a list, for error messages.
std::string first_names(const std::vector<std::string>& names);

}  // namespace ffnshape::interop
