// Iso-parameter experiments: arms (shapes or width schedules) x seeds on one parameter budget.
//
// An experiment file (YAML, strict):
//
//   name: demo                       # default: the file's stem
//   base: ../demo/conventional.yaml  # the base run config, relative to this file
//   set: [train.steps=600]           # overrides for every arm
//   seeds: [1, 2]                    # each arm trains once per seed; pairs share a seed
//   budget:
//     reference: conventional        # an arm whose own count is the budget ...
//     params: 5868800                # ... or a number
//     count: total                   # total | non_embedding
//     tolerance: 1.0e-5              # relative (0.001%)
//   reference: conventional          # the arm others are compared with (default: budget.reference, else the first)
//   profile: {arm: conventional, tokens: 512}   # the run whose work profile guides geometry schedules;
//                                    # also seed (default: the first of seeds; one outside seeds trains
//                                    # an extra run of the arm that serves the profile alone and is kept
//                                    # out of the results, so no evaluated seed saw its own profile),
//                                    # or seeds: [100, 101, 102] and samples: M (token samples per run):
//                                    # the profiles are pooled and the report gives each schedule's
//                                    # width spread (stable_multiples: 1, the spread still called stable);
//                                    # ph_threshold (1), ph_memory (GiB, 2), ph_seconds (300),
//                                    # topo_norm (linf | l2): as `ffnshape profile`'s flags
//   parallel: 2                      # runs trained side by side, each in its own process (default 1);
//                                    # with train.threads 0 each gets the cores / parallel
//   tasks: [arc_easy.jsonl, piqa.jsonl]  # zero-shot tasks (eval/tasks.h; format from the file name),
//                                    # scored after each run into RUN/tasks.json; needs data.tokenizer
//   arms:
//     - name: conventional
//     - name: hourglass
//       set: [model.ffn.kind=hourglass, model.ffn.k=2, model.n_layers=4]
//       solve: [d_model=128..512/4, ffn.hidden]    # free dimensions for the iso-parameter solver
//     - name: topo
//       schedule: topo:hyperbolic                   # a width-schedule rule (schedule/schedule.h)
//
// Runs go to RUN_ROOT/ARM/seed-S; a finished run (summary.json complete) is skipped and an
// interrupted one resumed, so the command can be re-run after any failure.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ffnshape/config/run_config.h"
#include "ffnshape/geometry/persistence.h"
#include "ffnshape/params/count.h"
#include "ffnshape/params/iso.h"

namespace ffnshape::experiment {

struct ArmSpec {
  std::string name;
  std::vector<std::string> overrides;  // --set style, applied after the experiment's own
  std::vector<std::string> solve;      // free-dimension specs (params/iso.h); empty: the shape is fixed
  std::string schedule;                // width-schedule rule; empty: the config's own widths
};

struct BudgetSpec {
  std::string reference;               // an arm name, or empty
  std::optional<int64_t> params;       // a number, when no reference arm
  BudgetCount count = BudgetCount::total;
  double tolerance = 1e-5;
};

struct ProfileSpec {
  std::string arm;        // the uniform reference arm that is profiled
  // Its runs to profile (default: the first seed; may lie outside the seeds), each on `samples` token
  // samples; more than one profile in all are pooled (schedule/profile_pool.h).
  std::vector<int64_t> seeds;
  int64_t samples = 1;
  int64_t tokens = 512;
  // A schedule whose widths move by more than this many multiples of ffn.multiple_of between the
  // pooled profiles is reported as unstable.
  int64_t stable_multiples = 1;
  double ph_threshold = 1.0;                 // topo: Rips edges up to this fraction of the largest distance
  geometry::PersistenceBudget ph_budget;     // per diagram
  double topo_internal_p = std::numeric_limits<double>::infinity();  // ground norm: L-inf, or 2 (L2)
};

struct ExperimentSpec {
  std::string name;
  std::string path;                    // the experiment file
  std::string base;                    // the base config, resolved against the file's folder
  std::vector<std::string> overrides;
  std::vector<int64_t> seeds{1};
  BudgetSpec budget;
  std::string reference;               // arm for paired comparisons
  std::optional<ProfileSpec> profile;
  std::vector<std::string> tasks;      // zero-shot task files, resolved against the file's folder
  int64_t parallel = 1;                // runs trained side by side (separate processes)
  std::vector<ArmSpec> arms;
};

// Reads and checks an experiment file; ConfigError naming the dotted key and line on any problem
// (unknown keys, duplicate or unknown arm names, a geometry schedule without a profile, ...).
ExperimentSpec load_experiment(const std::string& path);

// An arm solved to the budget: its config (train.seed unset, schedule unresolved) and accounting.
struct ArmPlan {
  ArmSpec spec;
  RunConfig config;
  int64_t budget = 0;
  int64_t params = 0;                   // counted as the budget counts
  double rel_error = 0;
  bool within_tolerance = true;
  std::string explanation;              // why the tolerance was missed
  std::map<std::string, int64_t> dimensions;  // solved free dimensions
  ParamCount counts;
};

// Builds every arm's config from the base and solves its free dimensions. A schedule keeps the
// uniform budget exactly, so arms are solved as uniform models and scheduled afterwards.
std::vector<ArmPlan> plan_experiment(const ExperimentSpec& spec);

// One run of an experiment: an arm and a seed.
struct RunRef {
  std::string arm;
  int64_t seed = 0;
};

struct ExperimentOptions {
  std::string run_root;   // default runs/<name>
  std::string only;       // train just this arm (and what it depends on)
  bool dry_run = false;   // plan and print, train nothing
  bool quiet = false;     // no per-step progress from the trainer (tests)
  int64_t parallel = 0;   // runs side by side; 0: the experiment's own `parallel`
  // With parallel > 1, the command line that trains one run of this same experiment in a process of
  // its own; " --job ARM:SEED" is appended (the ffnshape CLI gives its own path and arguments).
  std::vector<std::string> job_command;
  // Train only this run (and profile it, when it is a profile run), then return: what each process
  // of a parallel experiment does. No results or report.
  std::optional<RunRef> job;
  // Called with the run root once results.csv exists, before report.md is written (the CLI draws
  // the plots here, so that the report can show them).
  std::function<void(const std::string&)> before_report;
};

// The run directory of one arm and seed.
std::string run_dir(const std::string& run_root, const std::string& arm, int64_t seed);

// Trains every missing arm x seed of `plans` (from plan_experiment; every arm must meet the
// budget), profiling the reference first when a geometry schedule needs it, then writes results.csv,
// the plots (through options.before_report) and report.md. With parallel > 1, up to that many runs
// train at once, each in a process of its own (options.job_command) logging to RUN_DIR/train.log;
// the bits of every run are those of the runs trained one after the other. Returns the process exit
// code: 0 done, 1 a run stopped (interrupted or failed; rerun to continue).
int run_experiment(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans, const ExperimentOptions& options);

}  // namespace ffnshape::experiment
