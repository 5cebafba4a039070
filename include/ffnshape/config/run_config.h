// A whole config file: loading with --set overrides, strict validation, and the resolved form that
// every run writes next to its results.
#pragma once

#include <string>
#include <vector>

#include "ffnshape/config/model_config.h"
#include "ffnshape/config/train_config.h"

namespace ffnshape {

// Every section of a config file. Only `model` is required; the trainer checks that `data.train`
// is set before it starts.
struct RunConfig {
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
  OptimizerConfig optimizer;
  EvalConfig eval;
  CheckpointConfig checkpoint;
  LogConfig log;
};

// Loads `path`, applies "key=value" overrides, reads every section strictly and validates it.
// Any problem is a ConfigError that names the dotted key and its file line (or the --set).
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides = {});
RunConfig load_run_config_from_string(const std::string& yaml, const std::vector<std::string>& overrides = {},
                                      const std::string& name = "<string>");

// The fully resolved config as YAML: every default and derived size written out explicitly, so the
// file alone reproduces the model (loading it gives the same architecture).
std::string to_yaml(const RunConfig& config);

}  // namespace ffnshape
