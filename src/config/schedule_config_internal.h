// Reading and checking model.ffn.schedule, shared by model_config.cpp.
#pragma once

#include <optional>

#include "ffnshape/config/config_error.h"
#include "ffnshape/config/schedule_config.h"

namespace ffnshape {

class YamlSection;

// Reads ffn.schedule if present (strictly: unknown keys are errors).
std::optional<ScheduleConfig> parse_schedule_config(YamlSection& ffn);
// The first problem of the settings, located at model.ffn.schedule.<key>.
std::optional<ConfigError> find_schedule_problem(const ScheduleConfig& config, int64_t n_layers);

}  // namespace ffnshape
