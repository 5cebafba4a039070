#include "ffnshape/schedule/schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include "ffnshape/params/count.h"
#include "ffnshape/schedule/geometry_optimizer.h"
#include "../common/text_file.h"

namespace ffnshape::schedule {
namespace {

constexpr double kPi = 3.14159265358979323846;

ConfigError schedule_error(const std::string& key, const std::string& problem, const std::string& hint) {
  return ConfigError("model.ffn.schedule" + (key.empty() ? "" : "." + key), problem, hint);
}

// Scales a shape across depth so that its widths sum to `total`.
std::vector<double> on_budget(std::vector<double> shape, int64_t total) {
  const double sum = std::accumulate(shape.begin(), shape.end(), 0.0);
  for (auto& v : shape) v *= static_cast<double>(total) / sum;
  return shape;
}

// Position of layer l in [0, 1] from the first to the last layer.
double depth_fraction(int64_t l, int64_t n_layers) {
  return n_layers == 1 ? 0.0 : static_cast<double>(l) / static_cast<double>(n_layers - 1);
}

void geometry_rule(Schedule& s, const std::string& stat_geometry, const ModelConfig& base,
                   const ScheduleConfig& settings, const WorkProfile* profile) {
  if (profile == nullptr) {
    throw schedule_error("profile", "is needed by rule '" + s.rule + "' but none was given",
                         "pass --profile profile.json (from `ffnshape profile`) or set model.ffn.schedule.profile");
  }
  if (profile->n_layers != base.n_layers) {
    throw schedule_error("profile",
                         "'" + profile->source + "' comes from a model with " + std::to_string(profile->n_layers) +
                             " layers, but this model has " + std::to_string(base.n_layers),
                         "profile a reference model of the same depth as the scheduled one");
  }
  auto work = profile->work_of(stat_geometry);
  for (size_t l = 0; l < work.size(); ++l) {
    if (!std::isfinite(work[l]) || work[l] < 0) {
      throw schedule_error("profile", "'" + profile->source + "' has an unusable " + stat_geometry + " work (" +
                                          std::to_string(work[l]) + ") at layer " + std::to_string(l),
                           "profile the model again; every work value must be finite and non-negative");
    }
  }
  work = smooth_profile(work, settings.smoothing);
  const double mean = std::accumulate(work.begin(), work.end(), 0.0) / static_cast<double>(work.size());
  if (mean > 0) {
    for (auto& g : work) g /= mean;  // only relative work matters: the multiplier absorbs the scale
  }
  s.work = work;
  if (settings.exponent) {
    s.exponents.assign(work.size(), *settings.exponent);
  } else {
    try {
      s.exponents = exponents_from_dimension(profile->intrinsic_dimension, settings.alpha, settings.alpha_min,
                                             settings.alpha_max);
    } catch (const std::invalid_argument& e) {
      throw schedule_error("profile", "'" + profile->source + "': " + e.what(),
                           "set model.ffn.schedule.exponent to use one exponent for every layer");
    }
  }
  // Widths enter the surrogate in units of the uniform width: with per-layer exponents the answer
  // would otherwise depend on the unit (neurons vs multiples), and w^(-a_l) in neurons can differ by
  // orders of magnitude between layers and swamp the work.
  SurrogateProblem problem{work, s.exponents, settings.lambda, static_cast<double>(base.n_layers), settings.w_min,
                           settings.w_max};
  try {
    s.target = solve_surrogate(problem);
  } catch (const std::invalid_argument& e) {
    throw schedule_error("w_min", e.what(), "widen the bounds w_min / w_max");
  }
  for (auto& w : s.target) w *= static_cast<double>(s.uniform_width);
}

}  // namespace

Schedule make_schedule(const ModelConfig& base, const ScheduleConfig& settings, const WorkProfile* profile) {
  if (auto why = check_schedule_rule(settings.rule)) throw schedule_error("rule", *why, "e.g. topo:hyperbolic or cosine");
  ModelConfig uniform = base;
  uniform.ffn.widths.clear();
  uniform.ffn.schedule.reset();
  validate(uniform);

  Schedule s;
  s.rule = settings.rule;
  s.uniform_width = uniform.ffn_uniform_hidden();
  s.multiple_of = base.ffn.multiple_of;
  const int64_t n = base.n_layers;
  const int64_t total = n * s.uniform_width;
  int64_t lo = s.multiple_of, hi = total;  // hand-designed rules: any positive width

  const std::string guided = followed_statistic(settings.rule);
  const bool anti = guided != settings.rule;

  if (guided == "uniform") {
    s.target.assign(static_cast<size_t>(n), static_cast<double>(s.uniform_width));
  } else if (guided == "cosine") {
    std::vector<double> shape;
    for (int64_t l = 0; l < n; ++l) {
      shape.push_back(settings.end + (settings.start - settings.end) * (1 + std::cos(kPi * depth_fraction(l, n))) / 2);
    }
    s.target = on_budget(shape, total);
  } else if (guided == "linear") {
    std::vector<double> shape;
    for (int64_t l = 0; l < n; ++l) {
      shape.push_back(settings.beta_min + (settings.beta_max - settings.beta_min) * depth_fraction(l, n));
    }
    s.target = on_budget(shape, total);
  } else {
    geometry_rule(s, guided, base, settings, profile);
    const double u = static_cast<double>(s.uniform_width);
    lo = static_cast<int64_t>(std::ceil(settings.w_min * u - 1e-9));
    hi = static_cast<int64_t>(std::floor(settings.w_max * u + 1e-9));
  }
  try {
    s.widths = round_to_budget(s.target, s.multiple_of, total, lo, hi);
  } catch (const std::invalid_argument& e) {
    throw schedule_error("", e.what(), "lower model.ffn.multiple_of or widen the bounds w_min / w_max");
  }
  if (anti) {
    std::reverse(s.widths.begin(), s.widths.end());
    std::reverse(s.target.begin(), s.target.end());
  }
  return s;
}

void write_schedule_file(const std::string& path, const Schedule& s, const ModelConfig& base,
                         const ScheduleConfig& settings) {
  ModelConfig uniform = base, scheduled = base;
  uniform.ffn.widths.clear();
  uniform.ffn.schedule.reset();
  scheduled.ffn.widths = s.widths;
  scheduled.ffn.schedule.reset();
  const auto u = count_parameters(uniform), c = count_parameters(scheduled);
  nlohmann::json j{
      {"format", "ffnshape-schedule"},
      {"version", 1},
      {"rule", s.rule},
      {"n_layers", base.n_layers},
      {"d_model", base.d_model},
      {"ffn_kind", to_string(base.ffn.kind)},
      {"k", base.ffn.k},
      {"multiple_of", s.multiple_of},
      {"uniform_width", s.uniform_width},
      {"widths", s.widths},
      {"target", s.target},
      {"settings",
       {{"start", settings.start}, {"end", settings.end}, {"beta_min", settings.beta_min},
        {"beta_max", settings.beta_max}, {"smoothing", settings.smoothing}, {"alpha", settings.alpha},
        {"alpha_min", settings.alpha_min}, {"alpha_max", settings.alpha_max},
        {"exponent", settings.exponent ? nlohmann::json(*settings.exponent) : nlohmann::json(nullptr)},
        {"lambda", settings.lambda}, {"w_min", settings.w_min}, {"w_max", settings.w_max}}},
      {"profile", settings.profile},
      {"budget",
       {{"ffn_uniform", u.ffn}, {"ffn_scheduled", c.ffn}, {"total_uniform", u.total()},
        {"total_scheduled", c.total()},
        {"relative_error", static_cast<double>(c.total() - u.total()) / static_cast<double>(u.total())}}}};
  if (!s.work.empty()) j["work"] = s.work;
  if (!s.exponents.empty()) j["exponents"] = s.exponents;
  write_text_file(path, j.dump(2) + "\n");
}

std::vector<int64_t> read_schedule_widths(const std::string& path, const ModelConfig& model) {
  auto bad = [&](const std::string& problem) {
    return schedule_error("file", "'" + path + "' " + problem, "point it at a widths file written by `ffnshape schedule`");
  };
  std::ifstream in(path);
  if (!in) throw bad("cannot be opened");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("is not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object() || j.value("format", "") != "ffnshape-schedule" || !j.contains("widths") ||
      !j["widths"].is_array()) {
    throw bad("is not an ffnshape schedule (needs \"format\": \"ffnshape-schedule\" and a \"widths\" list)");
  }
  std::vector<int64_t> widths;
  for (const auto& w : j["widths"]) {
    if (!w.is_number_integer() || w.get<int64_t>() < 1) throw bad("has a width that is not a positive integer");
    widths.push_back(w.get<int64_t>());
  }
  if (static_cast<int64_t>(widths.size()) != model.n_layers) {
    throw bad("has " + std::to_string(widths.size()) + " widths, but the model has " + std::to_string(model.n_layers) +
              " layers");
  }
  return widths;
}

void resolve_schedule(ModelConfig& model) {
  if (!model.ffn.schedule || !model.ffn.widths.empty()) return;
  const auto& settings = *model.ffn.schedule;
  std::vector<int64_t> widths;
  if (!settings.file.empty()) {
    widths = read_schedule_widths(settings.file, model);
  } else if (settings.profile.empty()) {
    widths = make_schedule(model, settings).widths;
  } else {
    const auto profile = read_work_profile(settings.profile);
    widths = make_schedule(model, settings, &profile).widths;
  }
  model.ffn.widths = widths;
  validate(model);
}

}  // namespace ffnshape::schedule
