#include "ffnshape/schedule/profile_pool.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "../common/text_file.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/schedule/schedule.h"

namespace ffnshape::schedule {
namespace {

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  const double n = static_cast<double>(values.size());
  for (double v : values) s.mean += v / n;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = values.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  if (!std::isfinite(s.mean)) s.min = s.max = s.sd = s.mean;  // one NaN makes the whole layer unusable
  return s;
}

// A profile's statistic as shares of its sum over layers (schedules do not see a common factor).
std::vector<double> shares(const std::vector<double>& work) {
  double total = 0;
  for (double w : work) total += w;
  std::vector<double> out;
  for (double w : work) out.push_back(total > 0 ? w / total : NAN);
  return out;
}

ConfigError pool_error(const WorkProfile& first, const WorkProfile& other, const std::string& problem) {
  return ConfigError("profile", "'" + other.source + "' " + problem + " than '" + first.source + "'",
                     "pool profiles of one reference model, measured with the same statistics");
}

}  // namespace

PooledProfile pool_profiles(const std::vector<WorkProfile>& profiles) {
  if (profiles.empty()) throw ConfigError("profile", "has no profiles to pool", "profile at least one run");
  const auto& first = profiles.front();
  for (const auto& p : profiles) {
    if (p.n_layers != first.n_layers) throw pool_error(first, p, "has another number of layers");
    if (p.work.size() != first.work.size() ||
        !std::equal(p.work.begin(), p.work.end(), first.work.begin(), [](const auto& a, const auto& b) { return a.first == b.first; })) {
      throw pool_error(first, p, "has other statistics");
    }
  }
  PooledProfile pooled;
  pooled.profile.n_layers = first.n_layers;
  pooled.profile.source = "pooled";
  for (const auto& p : profiles) pooled.sources.push_back(p.source);
  const auto layers = static_cast<size_t>(first.n_layers);
  for (const auto& [name, unused] : first.work) {
    std::vector<std::vector<double>> per_profile;
    for (const auto& p : profiles) per_profile.push_back(shares(p.work.at(name)));
    for (size_t l = 0; l < layers; ++l) {
      std::vector<double> values;
      for (const auto& s : per_profile) values.push_back(s[l]);
      pooled.work[name].push_back(spread_of(values));
      pooled.profile.work[name].push_back(pooled.work[name].back().mean);
    }
  }
  for (size_t l = 0; l < layers; ++l) {
    std::vector<double> values;
    for (const auto& p : profiles) values.push_back(p.intrinsic_dimension.at(l));
    pooled.intrinsic_dimension.push_back(spread_of(values));
    pooled.profile.intrinsic_dimension.push_back(pooled.intrinsic_dimension.back().mean);
  }
  return pooled;
}

void write_pooled_profile(const std::string& path, const PooledProfile& pooled,
                          const std::map<std::string, WidthSpread>& schedules) {
  auto spread_json = [](const Spread& s) -> nlohmann::json {
    auto finite = [](double v) -> nlohmann::json { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
    return {{"mean", finite(s.mean)}, {"sd", finite(s.sd)}, {"min", finite(s.min)}, {"max", finite(s.max)}};
  };
  nlohmann::json layers = nlohmann::json::array();
  for (int64_t l = 0; l < pooled.profile.n_layers; ++l) {
    nlohmann::json work = nlohmann::json::object(), spread = nlohmann::json::object();
    for (const auto& [name, per_layer] : pooled.work) {
      const auto colon = name.find(':');
      const auto stat = name.substr(0, colon), geometry = name.substr(colon + 1);
      const double v = per_layer[l].mean;
      work[stat][geometry] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
      spread[stat][geometry] = spread_json(per_layer[l]);
    }
    layers.push_back({{"layer", l},
                      {"work", work},
                      {"work_spread", spread},
                      {"intrinsic_dimension", {{"in", pooled.intrinsic_dimension[l].mean}}},
                      {"intrinsic_dimension_spread", spread_json(pooled.intrinsic_dimension[l])}});
  }
  nlohmann::json widths = nlohmann::json::object();
  for (const auto& [name, w] : schedules) {
    widths[name] = {{"pooled", w.pooled}, {"single", w.single}, {"low", w.low}, {"high", w.high},
                    {"multiple_of", w.multiple_of}, {"largest_change_multiples", w.largest_change()}};
  }
  nlohmann::json j = {
      {"format", "ffnshape-profile"},
      {"version", 1},
      {"n_layers", pooled.profile.n_layers},
      {"pooled", {{"profiles", pooled.sources},
                  {"method", "per layer, the mean over the profiles of each statistic divided by its sum over layers"}}},
      {"layers", layers}};
  if (!schedules.empty()) j["schedules"] = widths;
  write_text_file(path, j.dump(2) + "\n");
}

int64_t WidthSpread::largest_change() const {
  int64_t largest = 0;
  for (size_t l = 0; l < low.size(); ++l) largest = std::max(largest, (high[l] - low[l]) / multiple_of);
  return largest;
}

WidthSpread width_spread(const ModelConfig& base, const ScheduleConfig& settings, const PooledProfile& pooled,
                         const std::vector<WorkProfile>& profiles) {
  WidthSpread out;
  const auto schedule = make_schedule(base, settings, &pooled.profile);
  out.pooled = schedule.widths;
  out.multiple_of = schedule.multiple_of;
  for (const auto& p : profiles) out.single.push_back(make_schedule(base, settings, &p).widths);
  // The range over the single profiles (the pooled widths alone when there are none).
  out.low = out.high = out.single.empty() ? out.pooled : out.single.front();
  for (const auto& widths : out.single) {
    for (size_t l = 0; l < widths.size(); ++l) {
      out.low[l] = std::min(out.low[l], widths[l]);
      out.high[l] = std::max(out.high[l], widths[l]);
    }
  }
  return out;
}

}  // namespace ffnshape::schedule
