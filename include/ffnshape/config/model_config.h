// The model section of a config: architecture only, no training settings.
//
// Optional sizes (head_dim, n_kv_heads, ffn.hidden) stay optional here and are derived on demand,
// so that changing d_model (as the iso-parameter solver does) re-derives them consistently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ffnshape/config/config_error.h"
#include "ffnshape/config/schedule_config.h"

namespace ffnshape {

class YamlSection;

enum class Family { llama, olmo2 };
enum class FfnKind { conventional, hourglass };
enum class InitDist { normal, truncated_normal };

// Llama-3 style low/high frequency rescaling of rotary frequencies (long-context variants).
struct RopeScaling {
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_seq_len = 8192;
};

struct FfnConfig {
  FfnKind kind = FfnKind::conventional;
  std::optional<int64_t> hidden;   // d_ff (conventional) or d_h per sub-block (hourglass)
  std::optional<double> ratio;     // hidden = ratio * d_model rounded to multiple_of, if hidden unset
  int64_t k = 1;                   // residual SwiGLU sub-blocks per layer
  int64_t multiple_of = 1;
  std::vector<int64_t> widths;     // optional per-layer hidden widths (length n_layers)
  // Optional width schedule on the budget of the uniform width; schedule/resolve_schedule fills
  // `widths` from it. A config gives either widths or a schedule, not both.
  std::optional<ScheduleConfig> schedule;
};

struct InitConfig {
  InitDist dist = InitDist::normal;
  double std = 0.02;
  bool depth_scaled = false;  // output projections (attention out, FFN down) use std / sqrt(2 L)
};

struct ModelConfig {
  Family family = Family::llama;
  int64_t vocab_size = 32000;
  int64_t d_model = 768;
  int64_t n_layers = 12;
  int64_t n_heads = 12;
  std::optional<int64_t> n_kv_heads;  // default n_heads
  std::optional<int64_t> head_dim;    // default d_model / n_heads
  bool qk_norm = false;
  bool tie_embeddings = true;
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;
  double norm_eps = 1e-5;
  int64_t max_seq_len = 1024;
  double z_loss = 0.0;  // coefficient of mean(logsumexp(logits)^2); 0 disables it
  FfnConfig ffn;
  InitConfig init;

  // Family defaults (qk_norm, tie_embeddings, rope_theta, norm_eps, init, z_loss) for a config
  // that names only its family.
  static ModelConfig defaults_for(Family family);

  int64_t kv_heads() const { return n_kv_heads.value_or(n_heads); }
  int64_t attn_head_dim() const { return head_dim ? *head_dim : d_model / n_heads; }
  int64_t q_width() const { return n_heads * attn_head_dim(); }
  int64_t kv_width() const { return kv_heads() * attn_head_dim(); }
  // Hidden width of each FFN sub-block of `layer`. Throws ConfigError for a schedule that has not
  // been resolved into widths yet (see schedule/schedule.h).
  int64_t ffn_hidden(int64_t layer) const;
  // The uniform hidden width (widths ignored): ffn.hidden or the rounded ffn.ratio * d_model.
  int64_t ffn_uniform_hidden() const;
};

// Reads and validates the `model` section. Throws ConfigError naming the dotted key.
ModelConfig parse_model_config(YamlSection& section);

// Checks every cross-key constraint; throws ConfigError with the dotted path ("model.<key>").
void validate(const ModelConfig& config);
// The same check as a value: empty when valid, else the first problem (the solver skips such shapes).
std::optional<ConfigError> find_problem(const ModelConfig& config);

// "llama, conventional d_ff 11008, d_model 4096, 32 layers, attention 32x128 (kv 32)"
std::string describe_shape(const ModelConfig& m);

const char* to_string(Family family);
const char* to_string(FfnKind kind);
const char* to_string(InitDist dist);

}  // namespace ffnshape
