#include "profiles.h"

#include <filesystem>

#include "../common/log.h"
#include "ffnshape/profile/work_profiler.h"
#include "ffnshape/schedule/schedule.h"

namespace fs = std::filesystem;

namespace ffnshape::experiment {
namespace {

// Token samples after the first are drawn with seeds far from any training seed's.
constexpr uint64_t kSampleStride = 1000003;

profile::ProfileOptions profile_options(const ProfileSpec& spec, uint64_t sampling_seed) {
  profile::ProfileOptions po;
  po.tokens = spec.tokens;
  po.ph_threshold = spec.ph_threshold;
  po.ph_budget = spec.ph_budget;
  po.topo_internal_p = spec.topo_internal_p;
  po.seed = sampling_seed;
  return po;
}

bool all_exist(const std::vector<ProfileSample>& samples) {
  for (const auto& s : samples) {
    if (!fs::exists(s.path)) return false;
  }
  return true;
}

}  // namespace

std::vector<ProfileSample> profile_samples(const std::string& run_root, const ProfileSpec& spec) {
  std::vector<ProfileSample> samples;
  for (auto seed : spec.seeds) {
    for (int64_t k = 0; k < spec.samples; ++k) {
      ProfileSample s;
      s.seed = seed;
      s.sample = k;
      s.sampling_seed = static_cast<uint64_t>(seed) + kSampleStride * static_cast<uint64_t>(k);
      s.path = is_pooled(spec) ? (fs::path(run_root) / "profiles" /
                                  ("seed-" + std::to_string(seed) + "-sample-" + std::to_string(k) + ".json")).string()
                               : schedule_profile_path(run_root);
      samples.push_back(s);
    }
  }
  return samples;
}

std::string schedule_profile_path(const std::string& run_root) { return (fs::path(run_root) / "profile.json").string(); }

bool is_pooled(const ProfileSpec& spec) { return spec.seeds.size() * static_cast<size_t>(spec.samples) > 1; }

ScheduleConfig arm_schedule(const ArmPlan& plan, const std::string& profile_path) {
  ScheduleConfig schedule;
  schedule.rule = plan.spec.schedule;
  if (schedule_needs_profile(schedule.rule)) schedule.profile = profile_path;
  return schedule;
}

void profile_reference_run(const std::string& run_root, const ProfileSpec& spec, int64_t seed, const std::string& run_dir) {
  for (const auto& s : profile_samples(run_root, spec)) {
    if (s.seed != seed || fs::exists(s.path)) continue;
    fs::create_directories(fs::path(s.path).parent_path());
    const auto profile = profile::profile_run(run_dir, profile_options(spec, s.sampling_seed), s.path);
    log::info("profiled {} (token sample {}) in {:.1f} s -> {}", run_dir, s.sample, profile.seconds, s.path);
  }
}

void pool_when_complete(const std::string& run_root, const ProfileSpec& spec, const std::vector<ArmPlan>& plans) {
  const auto pooled_path = schedule_profile_path(run_root);
  if (fs::exists(pooled_path)) return;
  if (const auto pool = read_pool(run_root, spec)) {
    schedule::write_pooled_profile(pooled_path, pool->pooled, arm_width_spreads(run_root, *pool, plans));
    log::info("pooled {} profiles -> {}", pool->profiles.size(), pooled_path);
  }
}

std::optional<ExperimentPool> read_pool(const std::string& run_root, const ProfileSpec& spec) {
  const auto samples = profile_samples(run_root, spec);
  if (!is_pooled(spec) || !all_exist(samples)) return std::nullopt;
  ExperimentPool pool;
  for (const auto& s : samples) pool.profiles.push_back(schedule::read_work_profile(s.path));
  pool.pooled = schedule::pool_profiles(pool.profiles);
  return pool;
}

std::map<std::string, schedule::WidthSpread> arm_width_spreads(const std::string& run_root, const ExperimentPool& pool,
                                                               const std::vector<ArmPlan>& plans) {
  std::map<std::string, schedule::WidthSpread> spreads;
  for (const auto& plan : plans) {
    if (!schedule_needs_profile(plan.spec.schedule)) continue;
    const auto settings = arm_schedule(plan, schedule_profile_path(run_root));
    spreads[plan.spec.name] = schedule::width_spread(plan.config.model, settings, pool.pooled, pool.profiles);
  }
  return spreads;
}

}  // namespace ffnshape::experiment
