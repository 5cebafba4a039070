#include "ffnshape/config/schedule_config.h"

#include <set>

#include "ffnshape/config/config_error.h"
#include "ffnshape/config/yaml_reader.h"
#include "schedule_config_internal.h"

namespace ffnshape {

std::optional<std::string> check_schedule_rule(const std::string& rule) {
  static const std::set<std::string> stats{"shift", "gw", "topo"};
  static const std::set<std::string> geometries{"raw", "spherical", "hyperbolic"};
  const std::string usage = "use uniform, cosine, linear, STAT:GEOMETRY (STAT shift|gw|topo, GEOMETRY "
                            "raw|spherical|hyperbolic, e.g. topo:hyperbolic), anti or anti:STAT:GEOMETRY";
  if (rule == "uniform" || rule == "cosine" || rule == "linear" || rule == "anti") return std::nullopt;
  std::string body = rule;
  if (body.rfind("anti:", 0) == 0) body = body.substr(5);
  const auto colon = body.find(':');
  if (colon == std::string::npos) return "unknown rule '" + rule + "'; " + usage;
  const auto stat = body.substr(0, colon);
  const auto geometry = body.substr(colon + 1);
  if (!stats.count(stat)) return "unknown statistic '" + stat + "' in rule '" + rule + "'; " + usage;
  if (!geometries.count(geometry)) return "unknown geometry '" + geometry + "' in rule '" + rule + "'; " + usage;
  return std::nullopt;
}

std::optional<ScheduleConfig> parse_schedule_config(YamlSection& ffn) {
  if (!ffn.has("schedule")) return std::nullopt;
  auto s = ffn.section("schedule");
  ScheduleConfig c;
  c.rule = s.get("rule", c.rule);
  c.file = s.get("file", c.file);
  c.profile = s.get("profile", c.profile);
  c.start = s.get("start", c.start);
  c.end = s.get("end", c.end);
  c.beta_min = s.get("beta_min", c.beta_min);
  c.beta_max = s.get("beta_max", c.beta_max);
  c.smoothing = s.get("smoothing", c.smoothing);
  c.alpha = s.get("alpha", c.alpha);
  c.alpha_min = s.get("alpha_min", c.alpha_min);
  c.alpha_max = s.get("alpha_max", c.alpha_max);
  c.exponent = s.optional<double>("exponent");
  c.lambda = s.get("lambda", c.lambda);
  c.w_min = s.get("w_min", c.w_min);
  c.w_max = s.get("w_max", c.w_max);
  s.finish();
  return c;
}

bool schedule_needs_profile(const std::string& rule) { return rule == "anti" || rule.find(':') != std::string::npos; }

std::string followed_statistic(const std::string& rule) {
  if (rule == "anti") return "topo:hyperbolic";
  return rule.rfind("anti:", 0) == 0 ? rule.substr(5) : rule;
}

std::optional<ConfigError> find_schedule_problem(const ScheduleConfig& c, int64_t n_layers) {
  auto problem = [](const std::string& key, const std::string& text, const std::string& hint) {
    return ConfigError("model.ffn.schedule." + key, text, hint);
  };
  if (c.rule.empty() == c.file.empty()) {
    return problem("rule", c.rule.empty() ? "is not set (nor schedule.file)" : "is set together with schedule.file",
                   "give either a rule (e.g. cosine, topo:hyperbolic) or a widths file from `ffnshape schedule`");
  }
  if (!c.rule.empty()) {
    if (auto why = check_schedule_rule(c.rule)) return problem("rule", *why, "e.g. rule: topo:hyperbolic (or --rule on the command line)");
    if (schedule_needs_profile(c.rule) && c.profile.empty()) {
      return problem("profile", "is not set, but rule '" + c.rule + "' is guided by a work profile",
                     "set model.ffn.schedule.profile to a profile.json written by `ffnshape profile`");
    }
  }
  if (!(c.start > 0) || !(c.end > 0)) return problem("start", "and end must be positive", "the taper default is 1.5 -> 0.5");
  if (!(c.beta_min > 0) || !(c.beta_max > 0)) {
    return problem("beta_min", "and beta_max must be positive", "OpenELM uses 0.5 -> 4.0");
  }
  if (c.smoothing < 1 || c.smoothing % 2 == 0) {
    return problem("smoothing", "is " + std::to_string(c.smoothing) + ", not an odd window of at least 1",
                   "use 1 (no smoothing), 3 or 5");
  }
  if (!(c.alpha > 0) || !(c.alpha_min > 0) || !(c.alpha_max >= c.alpha_min)) {
    return problem("alpha", "needs alpha > 0 and 0 < alpha_min <= alpha_max", "the defaults are 4, 0.05 and 2");
  }
  if (c.exponent && !(*c.exponent > 0)) return problem("exponent", "must be positive", "e.g. 0.5, or remove it");
  if (!c.lambda.empty()) {
    if (static_cast<int64_t>(c.lambda.size()) != n_layers) {
      return problem("lambda", "has " + std::to_string(c.lambda.size()) + " entries but n_layers is " +
                                   std::to_string(n_layers),
                     "give one weight per layer, or remove it (all 1)");
    }
    for (double v : c.lambda) {
      if (!(v > 0)) return problem("lambda", "has a weight that is not positive", "weights must be > 0");
    }
  }
  if (!(c.w_min > 0 && c.w_min <= 1) || !(c.w_max >= 1)) {
    return problem("w_min", "and w_max must satisfy 0 < w_min <= 1 <= w_max (multiples of the uniform width)",
                   "the defaults are 0.25 and 4");
  }
  return std::nullopt;
}

}  // namespace ffnshape
