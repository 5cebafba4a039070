#include "ffnshape/schedule/work_profile.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "ffnshape/config/config_error.h"

namespace ffnshape::schedule {
namespace {

ConfigError bad_profile(const std::string& path, const std::string& problem) {
  return ConfigError("model.ffn.schedule.profile", "'" + path + "' " + problem,
                     "point it at a profile.json written by `ffnshape profile`");
}

}  // namespace

const std::vector<double>& WorkProfile::work_of(const std::string& stat_geometry) const {
  auto it = work.find(stat_geometry);
  if (it == work.end()) {
    std::string measured;
    for (const auto& [name, values] : work) measured += (measured.empty() ? "" : ", ") + name;
    throw ConfigError("model.ffn.schedule.rule", "needs the work '" + stat_geometry + "', which the profile '" +
                                                     source + "' did not measure (it has: " + measured + ")",
                      "profile again with that statistic and geometry, or pick a rule the profile has");
  }
  return it->second;
}

WorkProfile read_work_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw bad_profile(path, "cannot be opened");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw bad_profile(path, std::string("is not valid JSON (") + e.what() + ")");
  }
  const auto format = j.is_object() ? j.find("format") : j.end();
  if (format == j.end() || !format->is_string() || *format != "ffnshape-profile") {
    throw bad_profile(path, "is not an ffnshape profile (no \"format\": \"ffnshape-profile\")");
  }
  WorkProfile profile;
  profile.source = path;
  try {
    // A number past int64 (parsed as a double) must not reach get<int64_t>: that cast is undefined.
    const auto& n_layers = j.at("n_layers");
    if (!n_layers.is_number_integer() || n_layers.get<int64_t>() < 1) {
      throw bad_profile(path, "has an n_layers that is not a positive integer");
    }
    profile.n_layers = n_layers.get<int64_t>();
    const auto& layers = j.at("layers");
    if (!layers.is_array() || static_cast<int64_t>(layers.size()) != profile.n_layers) {
      throw bad_profile(path, "has a \"layers\" list that does not match n_layers");
    }
    for (const auto& layer : layers) {
      profile.intrinsic_dimension.push_back(layer.at("intrinsic_dimension").at("in").get<double>());
      for (const auto& [stat, by_geometry] : layer.at("work").items()) {
        for (const auto& [geometry, value] : by_geometry.items()) {
          const double v = value.is_number() ? value.get<double>() : NAN;
          profile.work[stat + ":" + geometry].push_back(v);
        }
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad_profile(path, std::string("is incomplete (") + e.what() + ")");
  }
  for (const auto& [name, values] : profile.work) {
    if (static_cast<int64_t>(values.size()) != profile.n_layers) {
      throw bad_profile(path, "does not have '" + name + "' for every layer");
    }
  }
  return profile;
}

}  // namespace ffnshape::schedule
