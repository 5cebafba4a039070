// Internal: the work profiles of an experiment (profile: section). Which runs and token samples are
// profiled, where the files go, the pooled profile that the geometry schedules read, and how far
// each schedule's widths move between the profiles pooled.
//
// One profile in all (one seed, one sample) is written straight to RUN_ROOT/profile.json, as before
// pooling existed. Several go to RUN_ROOT/profiles/seed-S-sample-K.json and are pooled
// (schedule/profile_pool.h) into RUN_ROOT/profile.json, which also carries each schedule's widths
// from every single profile.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ffnshape/experiment/experiment.h"
#include "ffnshape/schedule/profile_pool.h"

namespace ffnshape::experiment {

struct ProfileSample {
  int64_t seed = 0;            // the reference run's training seed
  int64_t sample = 0;          // the token sample, 0-based
  uint64_t sampling_seed = 0;  // picks the tokens: the run's seed for sample 0
  std::string path;
};

// Every profile the experiment takes, in order (seeds, then samples).
std::vector<ProfileSample> profile_samples(const std::string& run_root, const ProfileSpec& spec);
// RUN_ROOT/profile.json: what the schedules read (the single profile, or the pool).
std::string schedule_profile_path(const std::string& run_root);
bool is_pooled(const ProfileSpec& spec);

// The schedule an arm trains with (its rule, the experiment's profile for geometry and anti rules).
ScheduleConfig arm_schedule(const ArmPlan& plan, const std::string& profile_path);

// Profiles the finished reference run `run_dir` (seed `seed`) on each of its missing token samples.
void profile_reference_run(const std::string& run_root, const ProfileSpec& spec, int64_t seed, const std::string& run_dir);
// When every sample of every seed exists and the pool does not, pools them (pooled experiments).
// One process alone may call it at a time: the parent of a parallel experiment, not its runs.
void pool_when_complete(const std::string& run_root, const ProfileSpec& spec, const std::vector<ArmPlan>& plans);

// The single profiles of a pooled experiment and their pool, read once (nullopt until all exist).
struct ExperimentPool {
  std::vector<schedule::WorkProfile> profiles;
  schedule::PooledProfile pooled;
};
std::optional<ExperimentPool> read_pool(const std::string& run_root, const ProfileSpec& spec);

// For each arm with a profile-guided schedule: its widths from the pool and from each single profile.
std::map<std::string, schedule::WidthSpread> arm_width_spreads(const std::string& run_root, const ExperimentPool& pool,
                                                               const std::vector<ArmPlan>& plans);

}  // namespace ffnshape::experiment
