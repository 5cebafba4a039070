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

std::vector<schedule::WorkProfile> read_samples(const std::vector<ProfileSample>& samples) {
  std::vector<schedule::WorkProfile> profiles;
  for (const auto& s : samples) profiles.push_back(schedule::read_work_profile(s.path));
  return profiles;
}

bool all_exist(const std::vector<ProfileSample>& samples) {
  for (const auto& s : samples) {
    if (!fs::exists(s.path)) return false;
  }
  return true;
}

std::map<std::string, schedule::WidthSpread> spreads_from(const std::string& run_root, const ProfileSpec& spec,
                                                          const std::vector<ArmPlan>& plans,
                                                          const schedule::PooledProfile& pooled) {
  std::map<std::string, schedule::WidthSpread> spreads;
  const auto profiles = read_samples(profile_samples(run_root, spec));
  for (const auto& plan : plans) {
    if (!schedule_needs_profile(plan.spec.schedule)) continue;
    spreads[plan.spec.name] =
        schedule::width_spread(plan.config.model, arm_schedule(plan, (fs::path(run_root) / "profile.json").string()), pooled, profiles);
  }
  return spreads;
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

void take_profiles(const std::string& run_root, const ProfileSpec& spec, const std::vector<ArmPlan>& plans,
                   int64_t seed, const std::string& run_dir) {
  const auto samples = profile_samples(run_root, spec);
  for (const auto& s : samples) {
    if (s.seed != seed || fs::exists(s.path)) continue;
    fs::create_directories(fs::path(s.path).parent_path());
    const auto profile = profile::profile_run(run_dir, profile_options(spec, s.sampling_seed), s.path);
    log::info("profiled {} (token sample {}) in {:.1f} s -> {}", run_dir, s.sample, profile.seconds, s.path);
  }
  const auto pooled_path = schedule_profile_path(run_root);
  if (!is_pooled(spec) || fs::exists(pooled_path) || !all_exist(samples)) return;
  const auto pooled = schedule::pool_profiles(read_samples(samples));
  schedule::write_pooled_profile(pooled_path, pooled, spreads_from(run_root, spec, plans, pooled));
  log::info("pooled {} profiles -> {}", samples.size(), pooled_path);
}

std::optional<schedule::PooledProfile> read_pool(const std::string& run_root, const ProfileSpec& spec) {
  const auto samples = profile_samples(run_root, spec);
  if (!is_pooled(spec) || !all_exist(samples)) return std::nullopt;
  return schedule::pool_profiles(read_samples(samples));
}

std::map<std::string, schedule::WidthSpread> arm_width_spreads(const std::string& run_root, const ProfileSpec& spec,
                                                               const std::vector<ArmPlan>& plans) {
  const auto pooled = read_pool(run_root, spec);
  return pooled ? spreads_from(run_root, spec, plans, *pooled) : std::map<std::string, schedule::WidthSpread>{};
}

}  // namespace ffnshape::experiment
