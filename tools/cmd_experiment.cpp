// ffnshape experiment EXPERIMENT.yaml [--run-root DIR] [--only ARM] [--set k=v]... [--parallel N] [--dry-run]
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
  int64_t parallel = 0;  // 0: the file's
  std::string job;       // ARM:SEED: the one run a process of a parallel experiment trains
};

// "ARM:SEED" -> the run; ConfigError when it is not of that form.
experiment::RunRef parse_job(const std::string& text) {
  const auto colon = text.rfind(':');
  try {
    size_t used = 0;
    if (colon != std::string::npos && colon > 0) {
      const auto seed = std::stoll(text.substr(colon + 1), &used);
      if (used == text.size() - colon - 1) return {text.substr(0, colon), seed};
    }
  } catch (const std::exception&) {
  }
  throw ConfigError("--job", "'" + text + "' is not ARM:SEED", "e.g. --job uniform:1");
}

// The command line that trains one run of this experiment in a process of its own.
std::vector<std::string> job_command(const ExperimentCliOptions& o, const std::string& run_root) {
  std::vector<std::string> argv{"/proc/self/exe", "experiment", o.file, "--run-root", run_root};
  for (const auto& override_ : o.overrides) argv.insert(argv.end(), {"--set", override_});
  return argv;
}

int run(const ExperimentCliOptions& o) {
  auto spec = experiment::load_experiment(o.file);
  for (auto& arm : spec.arms) arm.overrides.insert(arm.overrides.end(), o.overrides.begin(), o.overrides.end());
  experiment::ExperimentOptions options;
  options.run_root = o.run_root.empty() ? (std::filesystem::path("runs") / spec.name).string() : o.run_root;
  options.only = o.only;
  options.dry_run = o.dry_run;
  options.parallel = o.parallel;
  options.job_command = job_command(o, options.run_root);
  if (!o.job.empty()) {
    options.job = parse_job(o.job);
    return experiment::run_experiment(spec, experiment::plan_experiment(spec), options);
  }
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
  sub->add_option("--parallel", o->parallel, "Train up to N runs side by side, each in its own process (default: the file's parallel, else 1)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--job", o->job, "Train only the run ARM:SEED (what each process of --parallel runs)");
  sub->add_flag("--dry-run", o->dry_run, "Print each arm's solved shape, parameters and budget error; train nothing");
  return {sub, [o] {
            install_stop_handlers();  // a signal while it profiles before its first run is kept, not fatal
            return run(*o);
          }};
}

}  // namespace ffnshape::cli
