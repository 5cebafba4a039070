// model.ffn.schedule: a per-layer FFN width schedule, as plain settings. The config area only reads
// and checks them; schedule/ turns them into model.ffn.widths (resolve_schedule), because rules that
// need a work profile or a widths file read other files.
//
//   rule: uniform | cosine | linear | STAT:GEOMETRY | anti | anti:STAT:GEOMETRY
//         STAT is shift | gw | topo, GEOMETRY is raw | spherical | hyperbolic
//   file: widths.json          a schedule written by `ffnshape schedule` (instead of a rule)
//
// Every rule keeps the FFN parameter budget of the uniform model (model.ffn.hidden or ratio): the
// rule decides the shape across depth, the budget decides the scale.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ffnshape {

struct ScheduleConfig {
  std::string rule;     // see above; empty when `file` is given
  std::string file;     // widths JSON from `ffnshape schedule`; empty when `rule` is given
  std::string profile;  // work profile JSON from `ffnshape profile` (geometry and anti rules)

  // cosine (TLM taper): widths from start x uniform at the first layer to end x uniform at the last.
  double start = 1.5;
  double end = 0.5;
  // linear (OpenELM layer-wise scaling): multipliers of d_model growing linearly with depth.
  double beta_min = 0.5;
  double beta_max = 4.0;

  // Geometry-guided surrogate e_l(w) = lambda_l g_l w^(-a_l); see schedule/geometry_optimizer.h.
  int64_t smoothing = 3;      // centred moving-average window over layers applied to the work (1 = none)
  double alpha = 4.0;         // a_l = clip(alpha / d_int_l, alpha_min, alpha_max) ...
  double alpha_min = 0.05;
  double alpha_max = 2.0;
  std::optional<double> exponent;  // ... unless a fixed a_l for every layer is given
  std::vector<double> lambda;      // per-layer loss-sensitivity weights; empty means all 1
  double w_min = 0.25;             // bounds on each layer's width, as multiples of the uniform width
  double w_max = 4.0;

  bool empty() const { return rule.empty() && file.empty(); }
};

// The rule names: "uniform" ... Checks the syntax only; returns an explanation when it is not valid.
std::optional<std::string> check_schedule_rule(const std::string& rule);
// Whether a rule is guided by a work profile (STAT:GEOMETRY and the anti controls).
bool schedule_needs_profile(const std::string& rule);
// The STAT:GEOMETRY a guided rule follows: the rule itself, or what an anti control mirrors ("anti"
// alone: topo:hyperbolic).
std::string followed_statistic(const std::string& rule);

}  // namespace ffnshape
