// ffnshape schedule --config BASE.yaml --rule RULE [--profile profile.json] [--out widths.json]
//                   [--start S --end E | --beta-min A --beta-max B | --smoothing N --alpha A --exponent A
//                    --lambda l0,l1,... --w-min M --w-max M] [--set k=v]... [--json]
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "commands.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/params/count.h"
#include "ffnshape/schedule/schedule.h"
#include "format.h"

namespace ffnshape::cli {
namespace {

struct ScheduleOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string rule;
  std::string profile;
  std::string out;
  bool json = false;
  std::optional<double> start, end, beta_min, beta_max, alpha, alpha_min, alpha_max, exponent, w_min, w_max;
  std::optional<int64_t> smoothing;
  std::vector<double> lambda;
};

// The base config's own schedule settings (if any), then the command line's.
ScheduleConfig settings_from(const ScheduleOptions& o, const ModelConfig& base) {
  ScheduleConfig s = base.ffn.schedule.value_or(ScheduleConfig{});
  if (!o.rule.empty()) {
    s.rule = o.rule;
    s.file.clear();
  }
  if (!o.profile.empty()) s.profile = o.profile;
  auto set = [](auto& field, const auto& value) {
    if (value) field = *value;
  };
  set(s.start, o.start);
  set(s.end, o.end);
  set(s.beta_min, o.beta_min);
  set(s.beta_max, o.beta_max);
  set(s.alpha, o.alpha);
  set(s.alpha_min, o.alpha_min);
  set(s.alpha_max, o.alpha_max);
  set(s.w_min, o.w_min);
  set(s.w_max, o.w_max);
  set(s.smoothing, o.smoothing);
  if (o.exponent) s.exponent = o.exponent;
  if (!o.lambda.empty()) s.lambda = o.lambda;
  if (s.rule.empty()) {
    throw ConfigError("--rule", "is not set", "give a rule: uniform, cosine, linear, topo:hyperbolic, gw:spherical, anti, ...");
  }
  return s;
}

int run(const ScheduleOptions& o) {
  auto base = load_run_config(o.config, o.overrides).model;
  const auto settings = settings_from(o, base);
  ModelConfig checked = base;  // the settings are checked like a config's model.ffn.schedule
  checked.ffn.widths.clear();
  checked.ffn.schedule = settings;
  validate(checked);

  std::optional<schedule::WorkProfile> profile;
  if (!settings.profile.empty()) profile = schedule::read_work_profile(settings.profile);
  const auto s = schedule::make_schedule(base, settings, profile ? &*profile : nullptr);
  if (!o.out.empty()) schedule::write_schedule_file(o.out, s, base, settings);

  ModelConfig uniform = base, scheduled = base;
  uniform.ffn.widths.clear();
  uniform.ffn.schedule.reset();
  scheduled.ffn.widths = s.widths;
  scheduled.ffn.schedule.reset();
  const auto u = count_parameters(uniform).total(), c = count_parameters(scheduled).total();
  const double rel = static_cast<double>(c - u) / static_cast<double>(u);
  if (o.json) {
    nlohmann::json j{{"rule", s.rule},          {"uniform_width", s.uniform_width}, {"widths", s.widths},
                     {"target", s.target},      {"total_uniform", u},               {"total_scheduled", c},
                     {"relative_error", rel}};
    if (!s.work.empty()) j["work"] = s.work;
    if (!o.out.empty()) j["out"] = o.out;
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("rule     %s on %s (uniform width %lld, multiple of %lld)\n", s.rule.c_str(),
              describe_shape(uniform).c_str(), static_cast<long long>(s.uniform_width),
              static_cast<long long>(s.multiple_of));
  std::printf("%5s %10s %8s %8s%s\n", "layer", "target", "width", "x unif", s.work.empty() ? "" : "     work");
  for (size_t l = 0; l < s.widths.size(); ++l) {
    std::printf("%5zu %10.1f %8lld %8.3f", l, s.target[l], static_cast<long long>(s.widths[l]),
                static_cast<double>(s.widths[l]) / static_cast<double>(s.uniform_width));
    if (!s.work.empty()) std::printf(" %8.3f", s.work[l]);
    std::printf("\n");
  }
  std::printf("params   %s scheduled vs %s uniform (%+.6f%%)\n", with_commas(c).c_str(), with_commas(u).c_str(),
              100.0 * rel);
  if (!o.out.empty()) std::printf("wrote    %s\n", o.out.c_str());
  return kExitOk;
}

}  // namespace

Subcommand add_schedule_command(CLI::App& app) {
  auto o = std::make_shared<ScheduleOptions>();
  auto* sub = app.add_subcommand("schedule", "Per-layer FFN widths from a rule (and a work profile), on the uniform budget");
  sub->add_option("--config", o->config, "Base (uniform) config YAML: its ffn width sets the budget")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--rule", o->rule, "uniform | cosine | linear | STAT:GEOMETRY (e.g. topo:hyperbolic) | anti[:STAT:GEOMETRY]");
  sub->add_option("--profile", o->profile, "Work profile JSON from `ffnshape profile` (geometry and anti rules)")
      ->check(CLI::ExistingFile);
  sub->add_option("--out", o->out, "Write the schedule JSON here (use it as model.ffn.schedule.file)");
  sub->add_option("--start", o->start, "cosine: multiplier of the uniform width at the first layer (1.5)");
  sub->add_option("--end", o->end, "cosine: multiplier at the last layer (0.5)");
  sub->add_option("--beta-min", o->beta_min, "linear: multiplier of d_model at the first layer (0.5)");
  sub->add_option("--beta-max", o->beta_max, "linear: multiplier at the last layer (4.0)");
  sub->add_option("--smoothing", o->smoothing, "geometry: moving-average window over layers, odd (3; 1 = none)");
  sub->add_option("--alpha", o->alpha, "geometry: exponent a_l = clip(alpha / d_int_l, alpha_min, alpha_max) (4)");
  sub->add_option("--alpha-min", o->alpha_min, "geometry: smallest exponent (0.05)");
  sub->add_option("--alpha-max", o->alpha_max, "geometry: largest exponent (2)");
  sub->add_option("--exponent", o->exponent, "geometry: one fixed exponent for every layer instead");
  sub->add_option("--lambda", o->lambda, "geometry: per-layer sensitivity weights, comma-separated (all 1)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--w-min", o->w_min, "geometry: smallest width as a multiple of the uniform width (0.25)");
  sub->add_option("--w-max", o->w_max, "geometry: largest width as a multiple of the uniform width (4)");
  sub->add_option("--set", o->overrides, "Override a key of the base config: dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] { return run(*o); }};
}

}  // namespace ffnshape::cli
