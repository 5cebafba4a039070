// Grid sweeps: expansion, solving each point, and emitting the runs for a cluster.
#include "ffnshape/experiment/sweep.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ffnshape/config/yaml_reader.h"
#include "spec_reader.h"

namespace fs = std::filesystem;

namespace ffnshape::experiment {
namespace {

// "model.ffn.k" = "4" -> "k4"; characters a folder name cannot hold become '-'.
std::string point_label(const std::string& key, const std::string& value) {
  std::string label = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1) + value;
  for (auto& c : label) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '-';
  }
  return label;
}

std::string dimension_of(const std::string& spec) {
  auto name = spec.substr(0, spec.find_first_of("=/"));
  if (name.rfind("model.", 0) == 0) name = name.substr(6);
  return name;
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A run's nodes or GPUs per node: a whole number of at least `minimum`.
int resource_count(YamlSection& top, const std::string& key, int fallback, int minimum, const std::string& hint) {
  const auto value = top.get<int64_t>(key, fallback);
  if (value < minimum || value > 1'000'000) {
    throw top.error(key, "must be at least " + std::to_string(minimum) + ", but is " + std::to_string(value), hint);
  }
  return static_cast<int>(value);
}

// The training command of one array task; a data-parallel run's ranks are the tasks of one srun
// step, and --kill-on-bad-exit stops the others when one rank fails.
std::string slurm_train_line(const SweepSpec& spec) {
  const std::string train = "\"$FFNSHAPE\" train \"${CONFIGS[$task]}\" --run-dir \"${RUN_DIRS[$task]}\" --resume auto\n";
  return spec.data_parallel() ? "exec srun --kill-on-bad-exit=1 " + train : "exec " + train;
}

// #SBATCH lines for one data-parallel run: a task (rank) per GPU, or one per node for CPU tasks.
std::string slurm_resources(const SweepSpec& spec) {
  if (!spec.data_parallel()) return "";
  std::ostringstream out;
  out << "#SBATCH --nodes=" << spec.nodes << "\n"
      << "#SBATCH --ntasks-per-node=" << std::max(spec.gpus_per_node, 1) << "\n";
  if (spec.gpus_per_node > 0) out << "#SBATCH --gpus-per-node=" << spec.gpus_per_node << "\n";
  return out.str();
}

// One line of --emit list: a plain process, or torchrun starting one rank per GPU of this node.
std::string list_line(const SweepSpec& spec, const std::string& ffnshape, const std::string& config,
                      const std::string& run_dir) {
  std::string launcher = shell_quoted(ffnshape);
  if (spec.gpus_per_node > 1) {
    launcher = "torchrun --standalone --nproc_per_node=" + std::to_string(spec.gpus_per_node) + " --no-python " + launcher;
  }
  return launcher + " train " + shell_quoted(config) + " --run-dir " + shell_quoted(run_dir) + " --resume auto\n";
}

}  // namespace

SweepSpec load_sweep(const std::string& path) {
  auto doc = ConfigDocument::from_file(path);
  YamlSection top(doc, doc.root(), "");
  SweepSpec spec;
  read_shared_keys(top, path, spec.experiment);
  spec.solve = top.get("solve", spec.solve);
  spec.slurm = top.get("slurm", spec.slurm);
  spec.nodes = resource_count(top, "nodes", 1, 1, "give the nodes per run, e.g. nodes: 2 (1 is one node)");
  spec.gpus_per_node = resource_count(top, "gpus_per_node", 1, 0, "give the GPUs per node, e.g. gpus_per_node: 8 (0 is a CPU run)");
  const auto grid = top.raw("grid");
  if (!grid.IsMap() || grid.size() == 0) {
    throw ConfigError("grid", "is missing or not a mapping of keys to value lists",
                      "e.g. grid: {model.ffn.k: [1, 2, 4], model.n_layers: [6, 12]}", doc.where("grid"));
  }
  for (const auto& entry : grid) {
    const auto key = entry.first.Scalar();
    std::vector<std::string> values;
    if (entry.second.IsSequence()) {
      for (const auto& v : entry.second) {
        if (!v.IsScalar()) throw ConfigError("grid." + key, "has a value that is not a scalar", "list plain values", doc.where("grid." + key));
        values.push_back(v.Scalar());
      }
    } else if (entry.second.IsScalar()) {
      values.push_back(entry.second.Scalar());
    }
    if (values.empty()) throw ConfigError("grid." + key, "has no values", "write e.g. [1, 2, 4]", doc.where("grid." + key));
    for (const auto& free : spec.solve) {
      if (dimension_of(free) == (key.rfind("model.", 0) == 0 ? key.substr(6) : key)) {
        throw ConfigError("grid." + key, "is also in solve", "a grid key is set by each point; solve other dimensions",
                          doc.where("grid." + key));
      }
    }
    spec.grid.emplace_back(key, values);
  }
  top.finish();

  // The cartesian product, first key slowest.
  std::vector<ArmSpec> arms{ArmSpec{}};
  for (const auto& [key, values] : spec.grid) {
    std::vector<ArmSpec> next;
    for (const auto& arm : arms) {
      for (const auto& value : values) {
        ArmSpec point = arm;
        if (!point.name.empty()) point.name += "_";
        point.name += point_label(key, value);
        point.overrides.push_back(key + "=" + value);
        point.solve = spec.solve;
        next.push_back(point);
      }
    }
    arms = next;
  }
  spec.experiment.arms = arms;
  // "reference: base" budgets on the base config file as it is (before the sweep's own `set`);
  // another name must be a point.
  if (spec.experiment.budget.reference == "base") {
    spec.experiment.budget.params =
        counted_parameters(load_run_config(spec.experiment.base).model, spec.experiment.budget.count);
    spec.experiment.budget.reference.clear();
  } else if (!spec.experiment.budget.reference.empty()) {
    bool found = false;
    for (const auto& arm : arms) found = found || arm.name == spec.experiment.budget.reference;
    if (!found) {
      throw ConfigError("budget.reference", "names neither 'base' nor a grid point", "use reference: base, or params: N",
                        doc.where("budget.reference"));
    }
  }
  spec.experiment.reference = spec.experiment.budget.reference.empty() ? arms.front().name : spec.experiment.budget.reference;
  return spec;
}

SweepPlan plan_sweep(const SweepSpec& spec) {
  SweepPlan plan;
  plan.experiment = spec.experiment;
  plan.experiment.arms.clear();
  for (auto& arm_plan : plan_experiment(spec.experiment)) {
    if (arm_plan.within_tolerance) {
      plan.experiment.arms.push_back(arm_plan.spec);
      plan.feasible.push_back(std::move(arm_plan));
    } else {
      plan.skipped.push_back(std::move(arm_plan));
    }
  }
  if (!plan.feasible.empty()) {
    bool has_reference = false;
    for (const auto& p : plan.feasible) has_reference = has_reference || p.spec.name == plan.experiment.reference;
    if (!has_reference) plan.experiment.reference = plan.feasible.front().spec.name;
  }
  return plan;
}

std::string emit_sweep(const SweepPlan& plan, const SweepSpec& spec, const std::string& run_root,
                       const std::string& ffnshape, bool slurm) {
  if (!slurm && spec.nodes > 1) {
    throw ConfigError("nodes", "is " + std::to_string(spec.nodes) + ", but --emit list launches single-node tasks",
                      "use --emit slurm for runs across nodes, or set nodes: 1", spec.experiment.path);
  }
  const fs::path configs = fs::path(run_root) / "configs";
  fs::create_directories(configs);
  std::vector<std::string> config_files, run_dirs;
  for (const auto& p : plan.feasible) {
    for (auto seed : plan.experiment.seeds) {
      RunConfig config = p.config;
      config.train.seed = seed;
      const auto file = configs / (p.spec.name + "-seed-" + std::to_string(seed) + ".yaml");
      std::ofstream(file) << to_yaml(config);
      config_files.push_back(file.string());
      run_dirs.push_back(run_dir(run_root, p.spec.name, seed));
    }
  }
  std::ostringstream out;
  if (!slurm) {
    for (size_t i = 0; i < config_files.size(); ++i) out << list_line(spec, ffnshape, config_files[i], run_dirs[i]);
    return out.str();
  }
  out << "#!/usr/bin/env bash\n"
      << "# Slurm array job for the sweep " << plan.experiment.name << " (" << plan.feasible.size() << " points x "
      << plan.experiment.seeds.size() << " seeds): one array task per run, each training its own config"
      << (spec.data_parallel() ? " with srun's tasks as its ranks" : "") << ".\n"
      << "# Runs resume from their newest checkpoint, so a requeued task continues. Afterwards:\n"
      << "#   ffnshape sweep " << plan.experiment.path << " --run-root " << run_root << " --report\n"
      << "#SBATCH --job-name=ffnshape-" << plan.experiment.name << "\n"
      << "#SBATCH --array=0-" << (config_files.empty() ? 0 : config_files.size() - 1) << "\n"
      << "#SBATCH --output=" << (fs::path(run_root) / "slurm-%A_%a.out").string() << "\n"
      << slurm_resources(spec);
  for (const auto& line : spec.slurm) out << "#SBATCH " << line << "\n";
  out << "set -euo pipefail\n"
      << "FFNSHAPE=${FFNSHAPE:-" << shell_quoted(ffnshape) << "}\n"
      << "CONFIGS=(\n";
  for (const auto& f : config_files) out << "  " << shell_quoted(f) << "\n";
  out << ")\nRUN_DIRS=(\n";
  for (const auto& d : run_dirs) out << "  " << shell_quoted(d) << "\n";
  out << ")\n"
      << "task=${SLURM_ARRAY_TASK_ID:?run this script with sbatch}\n"
      << slurm_train_line(spec);
  return out.str();
}

}  // namespace ffnshape::experiment
