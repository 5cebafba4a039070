// Internal: training an experiment's runs side by side, each in a process of its own (the command
// ExperimentOptions::job_command with --job ARM:SEED), logging to RUN_DIR/train.log. The parent only
// schedules: runs whose schedule reads the profile start once the profiled runs are done and their
// profiles pooled; a stop request (SIGINT, SIGTERM) is passed on to every run, which checkpoints.
#pragma once

#include <cstdint>
#include <vector>

#include "jobs.h"

namespace ffnshape::experiment {

struct SideBySideOutcome {
  int failures = 0;          // runs that failed, or never started because the profile failed
  int64_t trained = 0;       // runs this invocation trained (started unfinished)
  bool interrupted = false;  // a stop request ended it; checkpoints are saved
};

SideBySideOutcome run_side_by_side(const ExperimentRun& run, const std::vector<Job>& jobs, int64_t parallel);

}  // namespace ffnshape::experiment
