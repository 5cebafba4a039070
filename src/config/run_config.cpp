#include "ffnshape/config/run_config.h"

#include <yaml-cpp/yaml.h>

#include "ffnshape/config/yaml_reader.h"

namespace ffnshape {
namespace {

RunConfig read_document(const ConfigDocument& doc) {
  RunConfig config;
  YamlSection root(doc, doc.root(), "");
  if (!root.has("model")) {
    throw ConfigError("model", "section is missing", "add a 'model:' section (see configs/demo/ for examples)",
                      doc.name());
  }
  auto model = root.section("model");
  config.model = parse_model_config(model);
  root.finish();
  try {
    validate(config.model);
  } catch (const ConfigError& e) {
    throw e.located(doc.where(e.path()));
  }
  return config;
}

void emit_model(YAML::Emitter& out, const ModelConfig& m) {
  out << YAML::Key << "model" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "family" << YAML::Value << to_string(m.family);
  out << YAML::Key << "vocab_size" << YAML::Value << m.vocab_size;
  out << YAML::Key << "d_model" << YAML::Value << m.d_model;
  out << YAML::Key << "n_layers" << YAML::Value << m.n_layers;
  out << YAML::Key << "n_heads" << YAML::Value << m.n_heads;
  out << YAML::Key << "n_kv_heads" << YAML::Value << m.kv_heads();
  out << YAML::Key << "head_dim" << YAML::Value << m.attn_head_dim();
  out << YAML::Key << "qk_norm" << YAML::Value << m.qk_norm;
  out << YAML::Key << "tie_embeddings" << YAML::Value << m.tie_embeddings;
  out << YAML::Key << "rope_theta" << YAML::Value << m.rope_theta;
  if (m.rope_scaling) {
    out << YAML::Key << "rope_scaling" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "factor" << YAML::Value << m.rope_scaling->factor;
    out << YAML::Key << "low_freq_factor" << YAML::Value << m.rope_scaling->low_freq_factor;
    out << YAML::Key << "high_freq_factor" << YAML::Value << m.rope_scaling->high_freq_factor;
    out << YAML::Key << "original_max_seq_len" << YAML::Value << m.rope_scaling->original_max_seq_len;
    out << YAML::EndMap;
  }
  out << YAML::Key << "norm_eps" << YAML::Value << m.norm_eps;
  out << YAML::Key << "max_seq_len" << YAML::Value << m.max_seq_len;
  out << YAML::Key << "z_loss" << YAML::Value << m.z_loss;
  out << YAML::Key << "init" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dist" << YAML::Value << to_string(m.init.dist);
  out << YAML::Key << "std" << YAML::Value << m.init.std;
  out << YAML::Key << "depth_scaled" << YAML::Value << m.init.depth_scaled;
  out << YAML::EndMap;
  out << YAML::Key << "ffn" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << to_string(m.ffn.kind);
  if (m.ffn.widths.empty()) {
    out << YAML::Key << "hidden" << YAML::Value << m.ffn_uniform_hidden();
  } else {
    out << YAML::Key << "widths" << YAML::Value << YAML::Flow << m.ffn.widths;
  }
  out << YAML::Key << "k" << YAML::Value << m.ffn.k;
  out << YAML::Key << "multiple_of" << YAML::Value << m.ffn.multiple_of;
  out << YAML::EndMap;
  out << YAML::EndMap;
}

}  // namespace

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides) {
  auto doc = ConfigDocument::from_file(path);
  doc.apply_overrides(overrides);
  return read_document(doc);
}

RunConfig load_run_config_from_string(const std::string& yaml, const std::vector<std::string>& overrides,
                                      const std::string& name) {
  auto doc = ConfigDocument::from_string(yaml, name);
  doc.apply_overrides(overrides);
  return read_document(doc);
}

std::string to_yaml(const RunConfig& config) {
  YAML::Emitter out;
  out.SetDoublePrecision(15);  // round-trips the decimals people write, prints 1e-05 as such
  out << YAML::BeginMap;
  emit_model(out, config.model);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ffnshape
