// Grid sweeps: every combination of listed values, each point solved to one parameter budget.
//
//   name: k-sweep
//   base: hourglass-113m-conventional.yaml   # relative to this file
//   set: [model.ffn.kind=hourglass]          # overrides for every point
//   seeds: [1]
//   budget: {reference: base, count: non_embedding, tolerance: 1.0e-5}   # base = the base file's own count
//   grid:                                     # any config keys, each with a list of values
//     model.ffn.k: [1, 2, 4, 8]
//     model.n_layers: [6, 12]
//   solve: [d_model=256..4096/4, ffn.hidden]  # free dimensions (a grid key is never solved)
//   slurm: ["--gres=gpu:1", "--time=24:00:00"]   # extra #SBATCH lines for --emit slurm
//   nodes: 1                                  # nodes per run (default 1; more need --emit slurm)
//   gpus_per_node: 1                          # ranks per node, one GPU each (default 1; 0 = a CPU task)
//
// With the defaults each run is one process, and --emit slurm asks for no resources itself (the
// `slurm:` lines do). With more nodes or GPUs each run is a data-parallel job: --emit slurm asks
// for nodes x gpus_per_node tasks (one per node for CPU tasks) and starts them with srun; --emit
// list starts one node's ranks with torchrun.
// A sweep is an experiment whose arms are the grid points; points that cannot meet the tolerance
// are listed with the reason and skipped.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ffnshape/experiment/experiment.h"

namespace ffnshape::experiment {

struct SweepSpec {
  ExperimentSpec experiment;  // shared keys; its arms are the expanded points
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;  // key -> values (YAML text)
  std::vector<std::string> solve;
  std::vector<std::string> slurm;
  int nodes = 1;
  int gpus_per_node = 1;
  bool data_parallel() const { return nodes > 1 || gpus_per_node > 1; }
};

// Reads a grid file and expands the grid into arms named after their values (e.g. k4_n_layers12).
// ConfigError naming the key on any problem.
SweepSpec load_sweep(const std::string& path);

struct SweepPlan {
  ExperimentSpec experiment;          // only the points that meet the budget
  std::vector<ArmPlan> feasible;
  std::vector<ArmPlan> skipped;       // with ArmPlan::explanation saying why
};
SweepPlan plan_sweep(const SweepSpec& spec);

// Writes one resolved config per point and seed under RUN_ROOT/configs and returns either a plain
// list of `ffnshape train` commands (one per line; torchrun lines for several GPUs) or a Slurm
// array-job script (one array task per run). `ffnshape` is the binary the commands call.
// ConfigError, before anything is written, for a list of runs that span several nodes.
std::string emit_sweep(const SweepPlan& plan, const SweepSpec& spec, const std::string& run_root,
                       const std::string& ffnshape, bool slurm);

}  // namespace ffnshape::experiment
