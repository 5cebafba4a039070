// ffnshape experiment EXPERIMENT.yaml [--run-root DIR] [--only ARM] [--set k=v]... [--dry-run]
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "ffnshape/experiment/experiment.h"
#include "ffnshape/experiment/report.h"
#include "ffnshape/train/distributed_env.h"
#include "ffnshape/train/trainer.h"
#include "plot_scripts.h"

namespace ffnshape::cli {
namespace {

struct ExperimentCliOptions {
  std::string file;
  std::string run_root;
  std::string only;
  std::vector<std::string> overrides;  // applied to every arm, after the file's own
  bool dry_run = false;
};

int run(const ExperimentCliOptions& o) {
  auto spec = experiment::load_experiment(o.file);
  for (auto& arm : spec.arms) arm.overrides.insert(arm.overrides.end(), o.overrides.begin(), o.overrides.end());
  experiment::ExperimentOptions options;
  options.run_root = o.run_root.empty() ? (std::filesystem::path("runs") / spec.name).string() : o.run_root;
  options.only = o.only;
  options.dry_run = o.dry_run;
  options.before_report = [&spec](const std::string& root) {
    run_plot_script("plot_experiment.py", {root, "--reference", spec.reference});
  };
  const auto plans = experiment::plan_experiment(spec);
  const bool reporter = read_distributed_env().rank == 0;  // of several ranks, rank 0 speaks
  if (reporter) std::cout << experiment::describe_plans(spec, plans) << std::flush;
  const int code = experiment::run_experiment(spec, plans, options);
  if (reporter && !o.dry_run) {
    std::ifstream report(std::filesystem::path(options.run_root) / "report.md");
    std::cout << "\n" << report.rdbuf();
  }
  return code;
}

}  // namespace

Subcommand add_experiment_command(CLI::App& app) {
  auto o = std::make_shared<ExperimentCliOptions>();
  auto* sub = app.add_subcommand("experiment", "Iso-parameter arms x seeds: train what is missing, then report");
  sub->add_option("experiment", o->file, "Experiment YAML")->required()->check(CLI::ExistingFile);
  sub->add_option("--run-root", o->run_root, "Folder of the experiment's runs and report (default runs/<name>)");
  sub->add_option("--only", o->only, "Train only this arm (and the run its schedule is profiled from)");
  sub->add_option("--set", o->overrides, "Override a key of every arm, after the file's own: dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--dry-run", o->dry_run, "Print each arm's solved shape, parameters and budget error; train nothing");
  return {sub, [o] {
            install_stop_handlers();  // a signal while it profiles before its first run is kept, not fatal
            return run(*o);
          }};
}

}  // namespace ffnshape::cli
