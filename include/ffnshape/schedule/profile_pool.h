// Work profiles pooled over reference runs (seeds) and token samples, and how far a schedule's widths
// move between the profiles pooled.
//
// A geometry schedule depends on the work profile only up to a common factor (the widths solve
// w_l ~ (g_l / mu)^(1 / (1 + a_l)) with mu set by the budget), so each profile's statistic is first
// divided by its sum over layers; the pooled work of a layer is the mean of those shares, and its
// intrinsic dimension the mean of the profiles' dimensions. A statistic missing or not finite in any
// one profile is not finite in the pool (a schedule on it is then refused, as for a single profile).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ffnshape/config/model_config.h"
#include "ffnshape/schedule/work_profile.h"

namespace ffnshape::schedule {

// One layer's value over the pooled profiles.
struct Spread {
  double mean = 0, sd = 0;  // sd: sample standard deviation (0 for one profile)
  double min = 0, max = 0;
};

struct PooledProfile {
  WorkProfile profile;                                  // what schedules read
  std::map<std::string, std::vector<Spread>> work;      // "stat:geometry" -> per layer, of the shares
  std::vector<Spread> intrinsic_dimension;              // per layer
  std::vector<std::string> sources;                     // the pooled files, in order
};

// Pools profiles of one depth; a ConfigError when they differ in depth or in the statistics measured.
PooledProfile pool_profiles(const std::vector<WorkProfile>& profiles);

// A schedule's widths from the pooled profile and from each single one.
struct WidthSpread {
  std::vector<int64_t> pooled;               // the widths the experiment trains
  std::vector<std::vector<int64_t>> single;  // per profile, in the pool's order
  std::vector<int64_t> low, high;            // per layer, over the single profiles
  int64_t multiple_of = 1;
  // The largest per-layer width range over the single profiles, in multiples of multiple_of: the
  // figure of a schedule's stability (0: every profile gives the same widths).
  int64_t largest_change() const;
};

WidthSpread width_spread(const ModelConfig& base, const ScheduleConfig& settings, const PooledProfile& pooled,
                         const std::vector<WorkProfile>& profiles);

// The pooled profile as a profile JSON that read_work_profile reads, with each layer's spread, the
// pooled files and, under "schedules", the width spread of each named schedule.
void write_pooled_profile(const std::string& path, const PooledProfile& pooled,
                          const std::map<std::string, WidthSpread>& schedules = {});

}  // namespace ffnshape::schedule
