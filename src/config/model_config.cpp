#include "ffnshape/config/model_config.h"

#include <cmath>

#include "ffnshape/config/yaml_reader.h"
#include "schedule_config_internal.h"

namespace ffnshape {
namespace {

template <class Enum>
Enum parse_enum(YamlSection& section, const std::string& key, Enum fallback,
                std::initializer_list<std::pair<const char*, Enum>> names) {
  auto text = section.optional<std::string>(key);
  if (!text) return fallback;
  std::string allowed;
  for (const auto& [name, value] : names) {
    if (*text == name) return value;
    allowed += (allowed.empty() ? "" : " | ") + std::string(name);
  }
  throw section.error(key, "unknown value '" + *text + "'", "use one of: " + allowed);
}

int64_t round_to_multiple(double value, int64_t multiple) {
  const auto rounded = static_cast<int64_t>(std::llround(value / static_cast<double>(multiple))) * multiple;
  return std::max(rounded, multiple);
}

ConfigError problem(const std::string& key, const std::string& text, const std::string& hint) {
  return ConfigError("model." + key, text, hint);
}

}  // namespace

const char* to_string(Family family) { return family == Family::llama ? "llama" : "olmo2"; }
const char* to_string(FfnKind kind) { return kind == FfnKind::conventional ? "conventional" : "hourglass"; }
const char* to_string(InitDist dist) { return dist == InitDist::normal ? "normal" : "truncated_normal"; }

std::string describe_shape(const ModelConfig& m) {
  std::string ffn = m.ffn.kind == FfnKind::conventional ? "conventional d_ff " : "hourglass K=" + std::to_string(m.ffn.k) + " d_h ";
  ffn += m.ffn.widths.empty() ? std::to_string(m.ffn_uniform_hidden()) : "per-layer";
  return std::string(to_string(m.family)) + ", " + ffn + ", d_model " + std::to_string(m.d_model) + ", " +
         std::to_string(m.n_layers) + " layers, attention " + std::to_string(m.n_heads) + "x" +
         std::to_string(m.attn_head_dim()) + " (kv " + std::to_string(m.kv_heads()) + ")";
}

ModelConfig ModelConfig::defaults_for(Family family) {
  ModelConfig config;
  config.family = family;
  if (family == Family::olmo2) {
    // OLMo-2: QK-norm, untied embeddings, RoPE 500000, eps 1e-6, truncated-normal init, z-loss.
    config.qk_norm = true;
    config.tie_embeddings = false;
    config.rope_theta = 500000.0;
    config.norm_eps = 1e-6;
    config.init.dist = InitDist::truncated_normal;
    config.z_loss = 1e-5;
  }
  return config;
}

int64_t ModelConfig::ffn_uniform_hidden() const {
  if (ffn.hidden) return *ffn.hidden;
  if (ffn.ratio) return round_to_multiple(*ffn.ratio * static_cast<double>(d_model), ffn.multiple_of);
  return 0;
}

int64_t ModelConfig::ffn_hidden(int64_t layer) const {
  if (!ffn.widths.empty()) return ffn.widths.at(static_cast<size_t>(layer));
  if (ffn.schedule) {
    throw ConfigError("model.ffn.schedule", "has not been resolved into per-layer widths",
                      "call ffnshape::schedule::resolve_schedule(config) (schedule/schedule.h) before building the model");
  }
  return ffn_uniform_hidden();
}

ModelConfig parse_model_config(YamlSection& section) {
  const Family family = parse_enum(section, "family", Family::llama,
                                   {{"llama", Family::llama}, {"olmo2", Family::olmo2}});
  ModelConfig config = ModelConfig::defaults_for(family);
  config.vocab_size = section.get("vocab_size", config.vocab_size);
  config.d_model = section.get("d_model", config.d_model);
  config.n_layers = section.get("n_layers", config.n_layers);
  config.n_heads = section.get("n_heads", config.n_heads);
  config.n_kv_heads = section.optional<int64_t>("n_kv_heads");
  config.head_dim = section.optional<int64_t>("head_dim");
  config.qk_norm = section.get("qk_norm", config.qk_norm);
  config.tie_embeddings = section.get("tie_embeddings", config.tie_embeddings);
  config.rope_theta = section.get("rope_theta", config.rope_theta);
  config.norm_eps = section.get("norm_eps", config.norm_eps);
  config.max_seq_len = section.get("max_seq_len", config.max_seq_len);
  config.z_loss = section.get("z_loss", config.z_loss);

  if (section.has("rope_scaling")) {
    auto scaling = section.section("rope_scaling");
    RopeScaling rs;
    rs.factor = scaling.get("factor", rs.factor);
    rs.low_freq_factor = scaling.get("low_freq_factor", rs.low_freq_factor);
    rs.high_freq_factor = scaling.get("high_freq_factor", rs.high_freq_factor);
    rs.original_max_seq_len = scaling.get("original_max_seq_len", rs.original_max_seq_len);
    scaling.finish();
    config.rope_scaling = rs;
  } else {
    section.section("rope_scaling");
  }

  auto init = section.section("init");
  config.init.dist = parse_enum(init, "dist", config.init.dist,
                                {{"normal", InitDist::normal}, {"truncated_normal", InitDist::truncated_normal}});
  config.init.std = init.get("std", config.init.std);
  config.init.depth_scaled = init.get("depth_scaled", config.init.depth_scaled);
  init.finish();

  auto ffn = section.section("ffn");
  config.ffn.kind = parse_enum(ffn, "kind", FfnKind::conventional,
                               {{"conventional", FfnKind::conventional}, {"hourglass", FfnKind::hourglass}});
  config.ffn.hidden = ffn.optional<int64_t>("hidden");
  config.ffn.ratio = ffn.optional<double>("ratio");
  config.ffn.k = ffn.get("k", config.ffn.k);
  config.ffn.multiple_of = ffn.get("multiple_of", config.ffn.multiple_of);
  config.ffn.widths = ffn.get("widths", std::vector<int64_t>{});
  config.ffn.schedule = parse_schedule_config(ffn);
  if (config.ffn.schedule && !config.ffn.widths.empty()) {
    throw ffn.error("schedule", "is set together with model.ffn.widths",
                    "keep one: a schedule derives the widths from model.ffn.hidden (or ratio)");
  }
  ffn.finish();
  section.finish();
  return config;
}

std::optional<ConfigError> find_problem(const ModelConfig& c) {
  auto positive = [](const char* key, int64_t value) -> std::optional<ConfigError> {
    if (value >= 1) return std::nullopt;
    return problem(key, "must be at least 1, but is " + std::to_string(value), "use a positive size");
  };
  for (auto [key, value] : {std::pair<const char*, int64_t>{"vocab_size", c.vocab_size},
                            {"d_model", c.d_model},
                            {"n_layers", c.n_layers},
                            {"n_heads", c.n_heads},
                            {"max_seq_len", c.max_seq_len},
                            {"ffn.k", c.ffn.k},
                            {"ffn.multiple_of", c.ffn.multiple_of}}) {
    if (auto p = positive(key, value)) return p;
  }
  if (c.n_kv_heads) {
    if (auto p = positive("n_kv_heads", *c.n_kv_heads)) return p;
    if (c.n_heads % *c.n_kv_heads != 0) {
      return problem("n_kv_heads", "n_heads (" + std::to_string(c.n_heads) + ") is not a multiple of n_kv_heads (" +
                                       std::to_string(*c.n_kv_heads) + ")",
                     "choose n_kv_heads dividing n_heads (GQA shares each k/v head among n_heads/n_kv_heads heads)");
    }
  }
  if (c.head_dim) {
    if (auto p = positive("head_dim", *c.head_dim)) return p;
  } else if (c.d_model % c.n_heads != 0) {
    return problem("head_dim", "is not set and d_model (" + std::to_string(c.d_model) +
                                   ") is not divisible by n_heads (" + std::to_string(c.n_heads) + ")",
                   "set model.head_dim explicitly, or choose d_model divisible by n_heads");
  }
  if (c.attn_head_dim() % 2 != 0) {
    return problem("head_dim", "must be even for rotary embeddings, but is " + std::to_string(c.attn_head_dim()),
                   "choose an even head_dim (or d_model / n_heads)");
  }
  if (!(c.rope_theta > 0)) return problem("rope_theta", "must be positive", "the usual values are 10000 or 500000");
  if (!(c.norm_eps > 0)) return problem("norm_eps", "must be positive", "the usual values are 1e-5 or 1e-6");
  if (!(c.z_loss >= 0)) return problem("z_loss", "must be zero or positive", "use 0 to disable, 1e-5 as in OLMo-2");
  if (!(c.init.std > 0)) return problem("init.std", "must be positive", "the usual value is 0.02");
  if (c.rope_scaling) {
    const auto& rs = *c.rope_scaling;
    if (!(rs.factor >= 1) || !(rs.low_freq_factor > 0) || !(rs.high_freq_factor > rs.low_freq_factor) ||
        rs.original_max_seq_len < 1) {
      return problem("rope_scaling", "needs factor >= 1, 0 < low_freq_factor < high_freq_factor, original_max_seq_len >= 1",
                     "Llama-3.1 uses factor 8, low_freq_factor 1, high_freq_factor 4, original_max_seq_len 8192");
    }
  }

  const auto& f = c.ffn;
  if (f.kind == FfnKind::conventional && f.k != 1) {
    return problem("ffn.k", "is " + std::to_string(f.k) + ", but a conventional FFN has exactly one sub-block",
                   "set model.ffn.kind: hourglass for K > 1, or k: 1");
  }
  if (f.hidden && f.ratio) {
    return problem("ffn.ratio", "is set together with ffn.hidden", "set only one of model.ffn.hidden and model.ffn.ratio");
  }
  if (f.ratio && !(*f.ratio > 0)) return problem("ffn.ratio", "must be positive", "e.g. 2.6667 or 0.4");
  if (!f.widths.empty()) {
    if (static_cast<int64_t>(f.widths.size()) != c.n_layers) {
      return problem("ffn.widths", "has " + std::to_string(f.widths.size()) + " entries but n_layers is " +
                                       std::to_string(c.n_layers),
                     "give exactly one hidden width per layer");
    }
    for (size_t i = 0; i < f.widths.size(); ++i) {
      if (f.widths[i] < 1 || f.widths[i] % f.multiple_of != 0) {
        return problem("ffn.widths[" + std::to_string(i) + "]",
                       "is " + std::to_string(f.widths[i]) + ", not a positive multiple of ffn.multiple_of (" +
                           std::to_string(f.multiple_of) + ")",
                       "round it to a multiple of " + std::to_string(f.multiple_of));
      }
    }
  } else if (!f.hidden && !f.ratio) {
    if (f.schedule) {
      return problem("ffn.hidden", "is not set (nor ffn.ratio), but a schedule needs the uniform width as its budget",
                     "set model.ffn.hidden or model.ffn.ratio: the schedule keeps the parameters of that uniform width");
    }
    return problem("ffn.hidden", "is not set (nor ffn.ratio nor ffn.widths)",
                   "set model.ffn.hidden (e.g. 2048) or model.ffn.ratio (e.g. 2.6667)");
  }
  if (f.hidden) {
    if (auto p = positive("ffn.hidden", *f.hidden)) return p;
    if (*f.hidden % f.multiple_of != 0) {
      return problem("ffn.hidden", "is " + std::to_string(*f.hidden) + ", not a multiple of ffn.multiple_of (" +
                                       std::to_string(f.multiple_of) + ")",
                     "round it, or lower model.ffn.multiple_of");
    }
  }
  if (f.schedule) {
    if (auto p = find_schedule_problem(*f.schedule, c.n_layers)) return p;
  }
  return std::nullopt;
}

void validate(const ModelConfig& config) {
  if (auto error = find_problem(config)) throw *error;
}

}  // namespace ffnshape
