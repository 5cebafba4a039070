// Internal: the runs an experiment trains, in order, and training one of them in this process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffnshape/experiment/experiment.h"

namespace ffnshape::experiment {

struct Job {
  const ArmPlan* plan = nullptr;
  int64_t seed = 0;
  bool profiled = false;       // a reference run that the experiment's profile is taken from
  bool needs_profile = false;  // its schedule reads the profile, which must exist before it starts
};

// What every job of one experiment invocation shares.
struct ExperimentRun {
  const ExperimentSpec& spec;
  const std::vector<ArmPlan>& plans;
  const ExperimentOptions& options;
  std::string root;           // the run root
  std::string profile_path;   // RUN_ROOT/profile.json
  bool writer = true;         // rank 0: writes the experiment's own files and speaks
};

// The selected runs in training order: the profiled reference runs first, then arm by arm.
std::vector<Job> experiment_jobs(const ExperimentRun& run);

enum class JobOutcome { done, failed, interrupted };

// Trains the job's run (or resumes it; a finished one is skipped), scores the experiment's tasks on
// it and, for a profiled run, takes its profiles. With `pool`, pools the profiles once all exist
// (false in the processes of a parallel experiment, whose parent pools). `tag` starts its log lines.
JobOutcome run_job(const ExperimentRun& run, const Job& job, bool pool, const std::string& tag);

// Torch threads a run gets: train.threads when set, else the cores shared between the runs trained
// side by side.
int64_t run_threads(const TrainConfig& config, int64_t parallel);
// The same for every arm of the experiment (0 when the arms differ).
int64_t threads_per_run(const std::vector<ArmPlan>& plans, int64_t parallel);

}  // namespace ffnshape::experiment
