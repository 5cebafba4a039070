#include "ffnshape/config/run_config.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>

#include "ffnshape/config/yaml_reader.h"

namespace ffnshape {
namespace {

// A double as a YAML number every common reader takes as one: YAML 1.1 readers (PyYAML) read an
// exponent without a decimal point, such as 1e-05, as a string, so one is added (1.0e-05).
struct Number {
  double value;
};

YAML::Emitter& operator<<(YAML::Emitter& out, Number n) {
  if (std::isnan(n.value)) return out << ".nan";
  if (std::isinf(n.value)) return out << (n.value > 0 ? ".inf" : "-.inf");
  char text[40];
  std::snprintf(text, sizeof text, "%.15g", n.value);  // round-trips the decimals people write
  std::string s = text;
  const auto e = s.find('e');
  if (e != std::string::npos && s.find('.') == std::string::npos) s.insert(e, ".0");
  return out << s;
}

YAML::Emitter& operator<<(YAML::Emitter& out, const std::vector<double>& values) {
  out << YAML::Flow << YAML::BeginSeq;
  for (const double v : values) out << Number{v};
  return out << YAML::EndSeq;
}

RunConfig read_document(const ConfigDocument& doc) {
  RunConfig config;
  YamlSection root(doc, doc.root(), "");
  if (!root.has("model")) {
    throw ConfigError("model", "section is missing", "add a 'model:' section (see configs/demo/ for examples)",
                      doc.name());
  }
  auto model = root.section("model");
  config.model = parse_model_config(model);
  auto data = root.section("data");
  config.data = parse_data_config(data);
  auto train = root.section("train");
  config.train = parse_train_config(train);
  auto optimizer = root.section("optimizer");
  config.optimizer = parse_optimizer_config(optimizer);
  auto eval = root.section("eval");
  config.eval = parse_eval_config(eval);
  auto checkpoint = root.section("checkpoint");
  config.checkpoint = parse_checkpoint_config(checkpoint);
  auto log = root.section("log");
  config.log = parse_log_config(log);
  root.finish();
  if (config.train.seq_len > config.model.max_seq_len) {
    throw ConfigError("train.seq_len", "is " + std::to_string(config.train.seq_len) + ", longer than model.max_seq_len (" +
                                           std::to_string(config.model.max_seq_len) + ")",
                      "shorten train.seq_len or raise model.max_seq_len", doc.where("train.seq_len"));
  }
  try {
    validate(config.model);
  } catch (const ConfigError& e) {
    throw e.located(doc.where(e.path()));
  }
  return config;
}

// An unresolved schedule, written out with every setting.
void emit_schedule(YAML::Emitter& out, const ScheduleConfig& s) {
  auto key = [&](const char* k) -> YAML::Emitter& { return out << YAML::Key << k << YAML::Value; };
  key("schedule") << YAML::BeginMap;
  if (!s.rule.empty()) key("rule") << s.rule;
  if (!s.file.empty()) key("file") << s.file;
  if (!s.profile.empty()) key("profile") << s.profile;
  key("start") << Number{s.start};
  key("end") << Number{s.end};
  key("beta_min") << Number{s.beta_min};
  key("beta_max") << Number{s.beta_max};
  key("smoothing") << s.smoothing;
  key("alpha") << Number{s.alpha};
  key("alpha_min") << Number{s.alpha_min};
  key("alpha_max") << Number{s.alpha_max};
  if (s.exponent) key("exponent") << Number{*s.exponent};
  if (!s.lambda.empty()) key("lambda") << s.lambda;
  key("w_min") << Number{s.w_min};
  key("w_max") << Number{s.w_max};
  out << YAML::EndMap;
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
  out << YAML::Key << "rope_theta" << YAML::Value << Number{m.rope_theta};
  if (m.rope_scaling) {
    out << YAML::Key << "rope_scaling" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "factor" << YAML::Value << Number{m.rope_scaling->factor};
    out << YAML::Key << "low_freq_factor" << YAML::Value << Number{m.rope_scaling->low_freq_factor};
    out << YAML::Key << "high_freq_factor" << YAML::Value << Number{m.rope_scaling->high_freq_factor};
    out << YAML::Key << "original_max_seq_len" << YAML::Value << m.rope_scaling->original_max_seq_len;
    out << YAML::EndMap;
  }
  out << YAML::Key << "norm_eps" << YAML::Value << Number{m.norm_eps};
  out << YAML::Key << "max_seq_len" << YAML::Value << m.max_seq_len;
  out << YAML::Key << "z_loss" << YAML::Value << Number{m.z_loss};
  out << YAML::Key << "init" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "dist" << YAML::Value << to_string(m.init.dist);
  out << YAML::Key << "std" << YAML::Value << Number{m.init.std};
  out << YAML::Key << "depth_scaled" << YAML::Value << m.init.depth_scaled;
  out << YAML::EndMap;
  out << YAML::Key << "ffn" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << to_string(m.ffn.kind);
  if (m.ffn.widths.empty()) {
    out << YAML::Key << "hidden" << YAML::Value << m.ffn_uniform_hidden();
  } else {
    // Resolved widths stand alone; the schedule they came from is kept as a comment after them.
    out << YAML::Key << "widths" << YAML::Value << YAML::Flow << m.ffn.widths;
    if (m.ffn.schedule) {
      const auto& s = *m.ffn.schedule;
      out << YAML::Comment("widths from schedule " + (s.file.empty() ? "rule " + s.rule : "file " + s.file) +
                           (s.profile.empty() ? "" : " (profile " + s.profile + ")") + " on the budget of hidden " +
                           std::to_string(m.ffn_uniform_hidden()));
    }
  }
  out << YAML::Key << "k" << YAML::Value << m.ffn.k;
  out << YAML::Key << "multiple_of" << YAML::Value << m.ffn.multiple_of;
  if (m.ffn.schedule && m.ffn.widths.empty()) emit_schedule(out, *m.ffn.schedule);
  out << YAML::EndMap;
  out << YAML::EndMap;
}

void emit_training(YAML::Emitter& out, const RunConfig& c) {
  auto key = [&](const char* k) -> YAML::Emitter& { return out << YAML::Key << k << YAML::Value; };
  key("data") << YAML::BeginMap;
  key("train") << c.data.train;
  key("val") << c.data.val;
  key("tokenizer") << c.data.tokenizer;
  out << YAML::EndMap;
  key("train") << YAML::BeginMap;
  key("seq_len") << c.train.seq_len;
  key("micro_batch") << c.train.micro_batch;
  key("grad_accum") << c.train.grad_accum;
  key("steps") << c.train.steps;
  key("seed") << c.train.seed;
  key("precision") << to_string(c.train.precision);
  key("device") << c.train.device;
  key("threads") << c.train.threads;
  key("tf32") << c.train.tf32;
  key("activation_checkpointing") << c.train.activation_checkpointing;
  key("deterministic") << c.train.deterministic;
  key("peak_tflops") << Number{c.train.peak_tflops};
  key("zero") << c.train.zero;
  key("bucket_mb") << Number{c.train.bucket_mb};
  key("overlap_comm") << c.train.overlap_comm;
  key("collective_timeout_s") << Number{c.train.collective_timeout_s};
  key("init_from") << c.train.init_from;
  out << YAML::EndMap;
  key("optimizer") << YAML::BeginMap;
  key("lr") << Number{c.optimizer.lr};
  key("min_lr") << Number{c.optimizer.min_lr};
  key("warmup_steps") << c.optimizer.warmup_steps;
  key("schedule") << to_string(c.optimizer.schedule);
  key("decay_fraction") << Number{c.optimizer.decay_fraction};
  key("weight_decay") << Number{c.optimizer.weight_decay};
  key("betas") << c.optimizer.betas;
  key("eps") << Number{c.optimizer.eps};
  key("clip") << Number{c.optimizer.clip};
  key("decay_embeddings") << c.optimizer.decay_embeddings;
  key("decay_norms") << c.optimizer.decay_norms;
  key("fused") << to_string(c.optimizer.fused);
  out << YAML::EndMap;
  key("eval") << YAML::BeginMap;
  key("every") << c.eval.every;
  key("batches") << c.eval.batches;
  out << YAML::EndMap;
  key("checkpoint") << YAML::BeginMap;
  key("every") << c.checkpoint.every;
  key("keep") << c.checkpoint.keep;
  out << YAML::EndMap;
  key("log") << YAML::BeginMap;
  key("every") << c.log.every;
  key("tensorboard") << c.log.tensorboard;
  key("layer_stats_every") << c.log.layer_stats_every;
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
  out << YAML::BeginMap;
  emit_model(out, config.model);
  emit_training(out, config);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ffnshape
