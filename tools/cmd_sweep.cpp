// ffnshape sweep GRID.yaml [--emit list|slurm] [--run-root DIR] [--report] [--dry-run]
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "ffnshape/experiment/report.h"
#include "ffnshape/experiment/sweep.h"
#include "plot_scripts.h"

namespace fs = std::filesystem;

namespace ffnshape::cli {
namespace {

struct SweepCliOptions {
  std::string file;
  std::string run_root;
  std::string emit;
  bool report = false;
  bool dry_run = false;
};

void plot(const std::string& root) {
  run_plot_script("plot_experiment.py", {root});
  run_plot_script("plot_sweep.py", {root});
}

int run(const SweepCliOptions& o) {
  const auto spec = experiment::load_sweep(o.file);
  const auto plan = experiment::plan_sweep(spec);
  const std::string root = o.run_root.empty() ? (fs::path("runs") / spec.experiment.name).string() : o.run_root;
  std::cout << experiment::describe_plans(plan.experiment, plan.feasible);
  if (!plan.skipped.empty()) {
    std::cout << "skipped (cannot meet the budget within " << spec.experiment.budget.tolerance * 100 << "%):\n";
    for (const auto& p : plan.skipped) {
      std::cout << "  " << p.spec.name << " (" << (p.rel_error * 100) << "%): " << p.explanation << "\n";
    }
  }
  if (plan.feasible.empty()) {
    std::cerr << "error: no point of the grid meets the budget\n  fix: widen the solve ranges or raise budget.tolerance\n";
    return kExitUsage;
  }
  if (o.dry_run) return kExitOk;

  if (!o.emit.empty()) {
    const bool slurm = o.emit == "slurm";
    const auto text = experiment::emit_sweep(plan, spec, root, executable_path(), slurm);
    const auto path = fs::path(root) / (slurm ? "sweep.sbatch" : "commands.txt");
    std::ofstream(path) << text;
    if (!slurm) std::cout << text;
    std::cout << "wrote " << path.string() << " and one config per run under " << (fs::path(root) / "configs").string()
              << (slurm ? "; submit with: sbatch " + path.string() : "") << "\n";
    return kExitOk;
  }
  if (o.report) {
    std::vector<experiment::RunRecord> records;
    for (const auto& p : plan.feasible) {
      for (auto seed : plan.experiment.seeds) {
        records.push_back(experiment::read_run_record(p.spec.name, seed, experiment::run_dir(root, p.spec.name, seed)));
      }
    }
    fs::create_directories(root);
    experiment::write_results_csv(root, plan.experiment, plan.feasible, records);
    plot(root);
    std::cout << experiment::write_report(root, plan.experiment, plan.feasible, records);
    return kExitOk;
  }
  experiment::ExperimentOptions options;
  options.run_root = root;
  options.before_report = plot;
  const int code = experiment::run_experiment(plan.experiment, plan.feasible, options);
  std::ifstream report(fs::path(root) / "report.md");
  std::cout << "\n" << report.rdbuf();
  return code;
}

}  // namespace

Subcommand add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepCliOptions>();
  auto* sub = app.add_subcommand("sweep", "Grid of shapes on one budget: run locally (resumable) or emit for a cluster");
  sub->add_option("grid", o->file, "Grid YAML")->required()->check(CLI::ExistingFile);
  sub->add_option("--run-root", o->run_root, "Folder of the sweep's runs and report (default runs/<name>)");
  sub->add_option("--emit", o->emit, "Write the runs' configs and a command list or a Slurm array script; train nothing")
      ->check(CLI::IsMember({"list", "slurm"}));
  sub->add_flag("--report", o->report, "Only aggregate the finished runs into results.csv, report.md and plots");
  sub->add_flag("--dry-run", o->dry_run, "Print every point's solved shape, or why it is skipped; train nothing");
  return {sub, [o] { return run(*o); }};
}

}  // namespace ffnshape::cli
