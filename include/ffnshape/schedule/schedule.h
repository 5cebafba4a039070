// Per-layer FFN width schedules on a fixed parameter budget.
//
// Rules (model.ffn.schedule.rule, `ffnshape schedule --rule`):
//   uniform          every layer at the uniform width
//   cosine           TLM taper: w_l = end + (start - end) (1 + cos(pi l / (L - 1))) / 2 times the
//                    uniform width (1.5 -> 0.5 by default, whose mean is the uniform width)
//   linear           OpenELM layer-wise scaling: beta_min -> beta_max times d_model, linear in depth
//   STAT:GEOMETRY    geometry-guided: the surrogate optimizer of geometry_optimizer.h on the
//                    smoothed work profile (e.g. topo:hyperbolic, gw:spherical)
//   anti[:S:G]       the control: the widths of S:G (default topo:hyperbolic) in reversed layer order
//
// Every rule is scaled to the budget of the uniform model, then rounded to multiples of
// model.ffn.multiple_of so that the widths sum to exactly L x the uniform width: the scheduled
// model has exactly the uniform model's parameters (every layer costs the same per unit of width).
// For an hourglass FFN the width is each layer's d_h, shared by its K sub-blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffnshape/config/model_config.h"
#include "ffnshape/schedule/work_profile.h"

namespace ffnshape::schedule {

struct Schedule {
  std::string rule;
  int64_t uniform_width = 0;
  int64_t multiple_of = 1;
  std::vector<double> target;        // continuous widths on budget, before rounding
  std::vector<int64_t> widths;       // what the model uses
  std::vector<double> work;          // geometry rules: the smoothed work the widths follow
  std::vector<double> exponents;     // geometry rules: a_l
};

// The widths of `settings.rule` for the uniform model `base` (its ffn.hidden or ffn.ratio sets the
// budget; its widths and schedule are ignored). Geometry and anti rules need `profile`, whose depth
// must match. Throws ConfigError naming model.ffn.schedule.<key> for unusable settings.
Schedule make_schedule(const ModelConfig& base, const ScheduleConfig& settings, const WorkProfile* profile = nullptr);

// A schedule file (`ffnshape schedule --out`): JSON with the widths, the rule and its settings, the
// budget check and the profile it came from.
void write_schedule_file(const std::string& path, const Schedule& schedule, const ModelConfig& base,
                         const ScheduleConfig& settings);
// The widths of a schedule file, checked against the model's depth and multiple_of.
std::vector<int64_t> read_schedule_widths(const std::string& path, const ModelConfig& model);

// Fills model.ffn.widths from model.ffn.schedule (reading its profile or widths file); nothing to do
// without a schedule or when the widths are already resolved. Call before building or counting a
// scheduled model; train() does.
void resolve_schedule(ModelConfig& model);

}  // namespace ffnshape::schedule
