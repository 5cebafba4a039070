#include "ffnshape/train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace ffnshape {

double learning_rate(const OptimizerConfig& c, int64_t step, int64_t total_steps) {
  const int64_t warmup = c.warmup_steps;
  if (step < warmup) return c.lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double span = static_cast<double>(std::max<int64_t>(total_steps - warmup, 1));
  const double p = std::clamp(static_cast<double>(step - warmup) / span, 0.0, 1.0);
  switch (c.schedule) {
    case LrSchedule::cosine:
      return c.min_lr + (c.lr - c.min_lr) * 0.5 * (1.0 + std::cos(M_PI * p));
    case LrSchedule::linear:
      return c.lr + (c.min_lr - c.lr) * p;
    case LrSchedule::wsd: {
      const double decay_steps = c.decay_fraction * static_cast<double>(total_steps);
      const double decay_start = static_cast<double>(total_steps) - decay_steps;
      if (decay_steps <= 0 || static_cast<double>(step) < decay_start) return c.lr;
      const double q = std::clamp((static_cast<double>(step) - decay_start) / decay_steps, 0.0, 1.0);
      return c.lr + (c.min_lr - c.lr) * q;
    }
    default:
      return c.lr;
  }
}

}  // namespace ffnshape
