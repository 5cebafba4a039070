// Running an experiment: the profile dependency first, then every missing arm x seed, then the report.
#include "../common/log.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../common/host_info.h"
#include "../common/text_file.h"
#include "ffnshape/eval/multiple_choice.h"
#include "ffnshape/experiment/experiment.h"
#include "ffnshape/experiment/report.h"
#include "ffnshape/schedule/schedule.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/distributed_env.h"
#include "ffnshape/train/trainer.h"
#include "jobs.h"
#include "profiles.h"
#include "sessions.h"
#include "side_by_side.h"

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

std::vector<Job> experiment_jobs(const ExperimentRun& run) {
  const auto& options = run.options;
  auto selected = [&](const ArmPlan& p) { return options.only.empty() || p.spec.name == options.only; };
  bool profile_needed = false;
  for (const auto& p : run.plans) profile_needed = profile_needed || (selected(p) && schedule_needs_profile(p.spec.schedule));

  std::vector<Job> jobs;
  const ArmPlan* profiled = nullptr;
  std::vector<int64_t> profile_seeds;
  if (profile_needed) {
    for (const auto& p : run.plans) {
      if (p.spec.name == run.spec.profile->arm) profiled = &p;
    }
    profile_seeds = run.spec.profile->seeds;
    for (auto seed : profile_seeds) jobs.push_back({profiled, seed, /*profiled=*/true, /*needs_profile=*/false});
  }
  auto is_profile_seed = [&](int64_t seed) {
    return std::find(profile_seeds.begin(), profile_seeds.end(), seed) != profile_seeds.end();
  };
  for (const auto& p : run.plans) {
    if (!selected(p)) continue;
    for (auto seed : run.spec.seeds) {
      if (&p == profiled && is_profile_seed(seed)) continue;
      jobs.push_back({&p, seed, false, schedule_needs_profile(p.spec.schedule)});
    }
  }
  return jobs;
}

JobOutcome run_job(const ExperimentRun& run, const Job& job, bool pool, const std::string& tag) {
  const auto& plan = *job.plan;
  const auto dir = run_dir(run.root, plan.spec.name, job.seed);
  if (read_run_record(plan.spec.name, job.seed, dir).complete) {
    if (run.writer) log::info("{}{} seed {}: finished earlier, skipped", tag, plan.spec.name, job.seed);
  } else {
    if (run.writer) log::info("{}{} seed {} -> {}", tag, plan.spec.name, job.seed, dir);
    TrainOptions train_options;
    train_options.run_dir = dir;
    train_options.resume = "auto";
    train_options.quiet = run.options.quiet || !run.writer;
    train_options.join_timeout_s = std::max(plan.config.train.collective_timeout_s, kBetweenRunsS);
    try {
      const auto result = train(run_config_for(plan, job.seed, run.profile_path), train_options);
      if (result.interrupted) {
        if (run.writer) {
          log::warn("stopped during {} seed {}; its checkpoint is saved: rerun the same command to continue",
                    plan.spec.name, job.seed);
        }
        return JobOutcome::interrupted;
      }
    } catch (const NonFiniteLoss& e) {
      log::error("{} seed {} stopped: {}; the other runs go on", plan.spec.name, job.seed, e.what());
      return JobOutcome::failed;
    }
  }
  if (!run.writer || !read_run_record(plan.spec.name, job.seed, dir).complete) return JobOutcome::done;
  if (!run.spec.tasks.empty()) score_tasks(dir, run.spec.tasks);
  if (job.profiled) {
    profile_reference_run(run.root, *run.spec.profile, job.seed, dir);
    if (pool) pool_when_complete(run.root, *run.spec.profile, run.plans);
  }
  return JobOutcome::done;
}

int64_t run_threads(const TrainConfig& config, int64_t parallel) {
  return config.threads > 0 ? config.threads : std::max<int64_t>(1, machine_cores() / parallel);
}

int64_t threads_per_run(const std::vector<ArmPlan>& plans, int64_t parallel) {
  if (plans.empty()) return 0;
  const auto threads = run_threads(plans.front().config.train, parallel);
  for (const auto& p : plans) {
    if (run_threads(p.config.train, parallel) != threads) return 0;
  }
  return threads;
}

namespace {

void check_runnable(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans, const ExperimentOptions& options) {
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
}

// The one job named by options.job, as the full job list would have it (a profiled run included).
int run_single_job(const ExperimentRun& run) {
  const auto& ref = *run.options.job;
  for (const auto& job : experiment_jobs(run)) {
    if (job.plan->spec.name == ref.arm && job.seed == ref.seed) return run_job(run, job, /*pool=*/false, "") == JobOutcome::done ? 0 : 1;
  }
  throw ConfigError("--job", "'" + ref.arm + ":" + std::to_string(ref.seed) + "' is not a run of this experiment",
                    "give an arm and one of its seeds (or a profile seed of the profiled arm)");
}

}  // namespace

int run_experiment(const ExperimentSpec& spec, const std::vector<ArmPlan>& plans, const ExperimentOptions& options) {
  const std::string root = options.run_root.empty() ? (fs::path("runs") / spec.name).string() : options.run_root;
  check_runnable(spec, plans, options);
  if (options.dry_run) return 0;
  // Started as several ranks (torchrun, srun), every rank walks the same runs and each run trains
  // data-parallel; rank 0 alone writes the experiment's own files and computes the profile.
  const ExperimentRun run{spec, plans, options, root, schedule_profile_path(root), read_distributed_env().rank == 0};
  if (options.job) return run_single_job(run);
  int64_t parallel = options.parallel > 0 ? options.parallel : spec.parallel;
  const auto cores = machine_cores();
  if (parallel > cores) {
    if (run.writer) log::info("parallel {} on {} cores: training {} runs side by side", parallel, cores, cores);
    parallel = cores;
  }
  if (parallel > 1 && read_distributed_env().world_size > 1) {
    throw ConfigError("parallel", "cannot train runs side by side when each run is data-parallel over ranks",
                      "use parallel: 1 with torchrun or srun, or train without ranks");
  }
  if (run.writer) {
    fs::create_directories(root);
    fs::copy_file(spec.path, fs::path(root) / "experiment.yaml", fs::copy_options::overwrite_existing);
  }

  const auto session = start_session(root, parallel, threads_per_run(plans, parallel));
  const auto jobs = experiment_jobs(run);
  int failures = 0;
  if (parallel > 1) {
    const auto outcome = run_side_by_side(run, jobs, parallel);
    if (run.writer) finish_session(session, outcome.trained);
    if (outcome.interrupted) return 1;
    failures = outcome.failures;
  } else {
    int64_t trained = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const bool was_complete = read_run_record(jobs[i].plan->spec.name, jobs[i].seed,
                                                run_dir(root, jobs[i].plan->spec.name, jobs[i].seed)).complete;
      const auto tag = "[" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + "] ";
      const auto outcome = run_job(run, jobs[i], /*pool=*/true, tag);
      trained += was_complete ? 0 : 1;
      if (outcome == JobOutcome::interrupted) {
        if (run.writer) finish_session(session, trained);
        return 1;
      }
      failures += outcome == JobOutcome::failed ? 1 : 0;
    }
    if (run.writer) finish_session(session, trained);
  }

  if (!run.writer) return failures > 0 ? 1 : 0;
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
