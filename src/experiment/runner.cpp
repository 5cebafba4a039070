// Running an experiment: the profile dependency first, then every missing arm x seed, then the report.
#include "../common/log.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../common/text_file.h"
#include "ffnshape/eval/multiple_choice.h"
#include "ffnshape/experiment/experiment.h"
#include "ffnshape/experiment/report.h"
#include "ffnshape/schedule/schedule.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/distributed_env.h"
#include "ffnshape/train/trainer.h"
#include "profiles.h"

namespace fs = std::filesystem;

namespace ffnshape::experiment {
namespace {

// How long the ranks of a data-parallel experiment wait for each other at the start of a run: rank 0
// profiles the reference and scores tasks between runs while the others are already waiting.
constexpr double kBetweenRunsS = 3600;

// The config one run trains: the arm's plan, its seed, and its schedule, which train() resolves into
// widths (after the ranks of a data-parallel experiment meet, so rank 0's profile exists by then).
RunConfig run_config_for(const ArmPlan& plan, int64_t seed, const std::string& profile_path) {
  RunConfig config = plan.config;
  config.train.seed = seed;
  if (!plan.spec.schedule.empty()) {
    config.model.ffn.widths.clear();
    config.model.ffn.schedule = arm_schedule(plan, profile_path);
  }
  return config;
}

// Scores the run's model on the experiment's zero-shot tasks into RUN/tasks.json (once per task).
void score_tasks(const std::string& run_dir, const std::vector<std::string>& tasks) {
  const auto path = fs::path(run_dir) / "tasks.json";
  nlohmann::json scores = nlohmann::json::object();
  if (fs::exists(path)) scores = nlohmann::json::parse(std::ifstream(path), nullptr, /*allow_exceptions=*/false);
  if (!scores.is_object()) scores = nlohmann::json::object();
  bool missing = false;
  for (const auto& task : tasks) missing = missing || !scores.contains(fs::path(task).stem().string());
  if (!missing) return;
  auto trained = load_trained_model(run_dir);
  const auto tokenizer = Tokenizer::load(trained.config.data.tokenizer);
  for (const auto& task : tasks) {
    const auto name = fs::path(task).stem().string();
    if (scores.contains(name)) continue;
    const auto score = eval::score_task(trained.model, tokenizer, eval::load_task(task, eval::guess_task_format(task)));
    scores[name] = {{"questions", score.questions}, {"acc", score.acc}, {"acc_stderr", score.acc_stderr},
                    {"acc_norm", score.acc_norm}, {"acc_norm_stderr", score.acc_norm_stderr}};
    log::info("{}: {} acc {:.4f} acc_norm {:.4f} ({} questions)", run_dir, name, score.acc, score.acc_norm, score.questions);
  }
  write_text_file(path.string(), scores.dump(2) + "\n");
}

}  // namespace

int run_experiment(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans, const ExperimentOptions& options) {
  const std::string root = options.run_root.empty() ? (fs::path("runs") / spec.name).string() : options.run_root;
  for (const auto& p : plans) {
    if (!p.within_tolerance) {
      throw ConfigError("arms", "arm '" + p.spec.name + "' cannot meet the budget: " + p.explanation + " (off by " +
                                    std::to_string(100.0 * p.rel_error) + "%)",
                        "widen its solve ranges, free another dimension, or raise budget.tolerance (see --dry-run)");
    }
  }
  if (!options.only.empty() &&
      std::none_of(plans.begin(), plans.end(), [&](const ArmPlan& p) { return p.spec.name == options.only; })) {
    throw ConfigError("--only", "names no arm ('" + options.only + "')", "use one of the experiment's arm names");
  }
  if (!spec.tasks.empty() && !plans.empty() && plans.front().config.data.tokenizer.empty()) {
    throw ConfigError("tasks", "need the runs' tokenizer, and the base config has no data.tokenizer",
                      "set data.tokenizer in the base config (or drop tasks)");
  }
  if (options.dry_run) return 0;
  // Started as several ranks (torchrun, srun), every rank walks the same runs and each run trains
  // data-parallel; rank 0 alone writes the experiment's own files and computes the profile.
  const bool writer = read_distributed_env().rank == 0;
  if (writer) {
    fs::create_directories(root);
    fs::copy_file(spec.path, fs::path(root) / "experiment.yaml", fs::copy_options::overwrite_existing);
  }

  const std::string profile_path = schedule_profile_path(root);
  auto selected = [&](const ArmPlan& p) { return options.only.empty() || p.spec.name == options.only; };
  bool profile_needed = false;
  for (const auto& p : plans) profile_needed = profile_needed || (selected(p) && schedule_needs_profile(p.spec.schedule));

  // The jobs in order: the profiled runs first when a schedule depends on them.
  std::vector<std::pair<const ArmPlan*, int64_t>> jobs;
  const ArmPlan* profiled = nullptr;
  std::vector<int64_t> profile_seeds;
  if (profile_needed) {
    for (const auto& p : plans) {
      if (p.spec.name == spec.profile->arm) profiled = &p;
    }
    profile_seeds = spec.profile->seeds;
    for (auto seed : profile_seeds) jobs.emplace_back(profiled, seed);
  }
  auto is_profile_seed = [&](int64_t seed) {
    return std::find(profile_seeds.begin(), profile_seeds.end(), seed) != profile_seeds.end();
  };
  for (const auto& p : plans) {
    if (!selected(p)) continue;
    for (auto seed : spec.seeds) {
      if (&p == profiled && is_profile_seed(seed)) continue;
      jobs.emplace_back(&p, seed);
    }
  }

  int failures = 0;
  size_t index = 0;
  for (const auto& [plan, seed] : jobs) {
    ++index;
    const auto dir = run_dir(root, plan->spec.name, seed);
    if (read_run_record(plan->spec.name, seed, dir).complete) {
      if (writer) log::info("[{}/{}] {} seed {}: finished earlier, skipped", index, jobs.size(), plan->spec.name, seed);
    } else {
      if (writer) log::info("[{}/{}] {} seed {} -> {}", index, jobs.size(), plan->spec.name, seed, dir);
      TrainOptions train_options;
      train_options.run_dir = dir;
      train_options.resume = "auto";
      train_options.quiet = options.quiet || !writer;
      train_options.join_timeout_s = std::max(plan->config.train.collective_timeout_s, kBetweenRunsS);
      try {
        const auto result = train(run_config_for(*plan, seed, profile_path), train_options);
        if (result.interrupted) {
          if (writer) log::warn("stopped during {} seed {}; its checkpoint is saved: rerun the same command to continue",
                       plan->spec.name, seed);
          return 1;
        }
      } catch (const NonFiniteLoss& e) {
        log::error("{} seed {} stopped: {}; the other runs go on", plan->spec.name, seed, e.what());
        ++failures;
        continue;
      }
    }
    if (writer && !spec.tasks.empty() && read_run_record(plan->spec.name, seed, dir).complete) score_tasks(dir, spec.tasks);
    if (writer && plan == profiled && is_profile_seed(seed) && read_run_record(plan->spec.name, seed, dir).complete) {
      take_profiles(root, *spec.profile, plans, seed, dir);
    }
  }

  if (!writer) return failures > 0 ? 1 : 0;
  std::vector<RunRecord> records;
  for (const auto& p : plans) {
    for (auto seed : spec.seeds) records.push_back(read_run_record(p.spec.name, seed, run_dir(root, p.spec.name, seed)));
  }
  write_results_csv(root, spec, plans, records);
  if (options.before_report) options.before_report(root);
  write_report(root, spec, plans, records);
  log::info("results: {}/results.csv, {}/report.md", root, root);
  return failures > 0 ? 1 : 0;
}

}  // namespace ffnshape::experiment
