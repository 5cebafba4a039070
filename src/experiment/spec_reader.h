// Internal: the keys experiment and sweep files share (name, base, set, seeds, budget).
#pragma once

#include <string>

#include "ffnshape/config/yaml_reader.h"
#include "ffnshape/experiment/experiment.h"

namespace ffnshape::experiment {

// Reads name, base (resolved against the file's folder), set, seeds and budget into `spec`.
void read_shared_keys(YamlSection& top, const std::string& path, ExperimentSpec& spec);

}  // namespace ffnshape::experiment
