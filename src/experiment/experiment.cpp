// Reading an experiment file and solving its arms to the budget.
#include "ffnshape/experiment/experiment.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "ffnshape/config/yaml_reader.h"
#include "ffnshape/eval/tasks.h"
#include "spec_reader.h"

namespace fs = std::filesystem;

namespace ffnshape::experiment {
namespace {

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

ArmSpec read_arm(YamlSection& s) {
  ArmSpec arm;
  arm.name = s.require<std::string>("name", "give every arm a name, e.g. name: hourglass");
  if (!valid_name(arm.name)) {
    throw s.error("name", "'" + arm.name + "' is not usable as a folder name", "use letters, digits, '-', '_' and '.'");
  }
  arm.overrides = s.get("set", std::vector<std::string>{});
  arm.solve = s.get("solve", std::vector<std::string>{});
  arm.schedule = s.get("schedule", std::string{});
  if (!arm.schedule.empty()) {
    if (auto why = check_schedule_rule(arm.schedule)) throw s.error("schedule", *why, "e.g. schedule: topo:hyperbolic");
  }
  s.finish();
  return arm;
}

}  // namespace

void read_shared_keys(YamlSection& top, const std::string& path, ExperimentSpec& spec) {
  spec.path = path;
  spec.name = top.get("name", fs::path(path).stem().string());
  if (!valid_name(spec.name)) {
    throw top.error("name", "'" + spec.name + "' is not usable as a folder name", "use letters, digits, '-', '_' and '.'");
  }
  const auto base = top.require<std::string>("base", "point it at a run config, e.g. base: ../demo/conventional.yaml");
  spec.base = fs::path(base).is_absolute() ? base : (fs::path(path).parent_path() / base).lexically_normal().string();
  if (!fs::exists(spec.base)) {
    throw top.error("base", "'" + spec.base + "' does not exist", "paths are relative to the experiment file's folder");
  }
  spec.overrides = top.get("set", std::vector<std::string>{});
  for (const auto& task : top.get("tasks", std::vector<std::string>{})) {
    const auto resolved = fs::path(task).is_absolute() ? task : (fs::path(path).parent_path() / task).lexically_normal().string();
    if (!fs::exists(resolved)) throw top.error("tasks", "'" + resolved + "' does not exist", "paths are relative to the experiment file's folder");
    try {
      eval::guess_task_format(resolved);
    } catch (const ConfigError& e) {
      throw top.error("tasks", "'" + resolved + "' names no known task", "put arc, hellaswag or piqa in the file name");
    }
    spec.tasks.push_back(resolved);
  }
  spec.seeds = top.get("seeds", spec.seeds);
  if (spec.seeds.empty() || std::set<int64_t>(spec.seeds.begin(), spec.seeds.end()).size() != spec.seeds.size()) {
    throw top.error("seeds", "must be a non-empty list of distinct seeds", "e.g. seeds: [1, 2, 3]");
  }

  auto budget = top.section("budget");
  spec.budget.reference = budget.get("reference", std::string{});
  spec.budget.params = budget.optional<int64_t>("params");
  const auto count = budget.get("count", std::string("total"));
  if (count != "total" && count != "non_embedding") {
    throw budget.error("count", "unknown value '" + count + "'", "use total or non_embedding");
  }
  spec.budget.count = count == "total" ? BudgetCount::total : BudgetCount::non_embedding;
  spec.budget.tolerance = budget.get("tolerance", spec.budget.tolerance);
  if (!(spec.budget.tolerance > 0)) throw budget.error("tolerance", "must be positive", "1.0e-5 is 0.001%");
  if (spec.budget.reference.empty() == !spec.budget.params.has_value()) {
    throw budget.error("reference", spec.budget.reference.empty() ? "is not set (nor budget.params)" : "is set together with budget.params",
                       "give either an arm whose count is the budget (reference: NAME) or a number (params: N)");
  }
  if (spec.budget.params && *spec.budget.params < 1) throw budget.error("params", "must be positive", "e.g. 113283840");
  budget.finish();
}

ExperimentSpec load_experiment(const std::string& path) {
  auto doc = ConfigDocument::from_file(path);
  YamlSection top(doc, doc.root(), "");
  ExperimentSpec spec;
  read_shared_keys(top, path, spec);
  std::set<std::string> names;
  for (auto& arm_section : top.sections("arms")) {
    auto arm = read_arm(arm_section);
    if (!names.insert(arm.name).second) {
      throw arm_section.error("name", "'" + arm.name + "' names two arms", "give every arm its own name");
    }
    spec.arms.push_back(arm);
  }
  if (spec.arms.empty()) throw top.error("arms", "is empty", "list at least one arm: arms: [{name: baseline}]");
  spec.parallel = top.get("parallel", spec.parallel);
  if (spec.parallel < 1) throw top.error("parallel", "must be at least 1", "the runs trained side by side, e.g. parallel: 2");

  auto arm_named = [&](const std::string& name) -> const ArmSpec* {
    for (const auto& arm : spec.arms) {
      if (arm.name == name) return &arm;
    }
    return nullptr;
  };
  if (!spec.budget.reference.empty()) {
    const auto* ref = arm_named(spec.budget.reference);
    if (!ref) throw top.error("budget.reference", "names no arm ('" + spec.budget.reference + "')", "use one of the arm names");
    if (!ref->solve.empty()) {
      throw top.error("budget.reference", "arm '" + ref->name + "' solves dimensions, so its count cannot be the budget",
                      "make the reference an arm with a fixed shape, or give budget.params");
    }
  }
  spec.reference = top.get("reference", spec.budget.reference.empty() ? spec.arms.front().name : spec.budget.reference);
  if (!arm_named(spec.reference)) throw top.error("reference", "names no arm ('" + spec.reference + "')", "use one of the arm names");

  if (top.has("profile")) {
    auto p = top.section("profile");
    ProfileSpec profile;
    profile.arm = p.require<std::string>("arm", "name the uniform arm whose run is profiled");
    if (p.has("seed") && p.has("seeds")) throw p.error("seeds", "is given with seed", "give one of them");
    profile.seeds = p.get("seeds", std::vector<int64_t>{p.get("seed", spec.seeds.front())});
    if (profile.seeds.empty() || std::set<int64_t>(profile.seeds.begin(), profile.seeds.end()).size() != profile.seeds.size()) {
      throw p.error("seeds", "must be a non-empty list of distinct seeds", "e.g. seeds: [100, 101, 102]");
    }
    profile.samples = p.get("samples", profile.samples);
    if (profile.samples < 1) throw p.error("samples", "must be at least 1", "the token samples profiled per run, e.g. 3");
    profile.stable_multiples = p.get("stable_multiples", profile.stable_multiples);
    if (profile.stable_multiples < 0) throw p.error("stable_multiples", "must not be negative", "0 asks for identical widths");
    profile.tokens = p.get("tokens", profile.tokens);
    const auto* arm = arm_named(profile.arm);
    if (!arm) throw p.error("arm", "names no arm ('" + profile.arm + "')", "use one of the arm names");
    if (!arm->schedule.empty()) throw p.error("arm", "'" + profile.arm + "' has a schedule", "profile a uniform arm");
    if (profile.tokens < 3) throw p.error("tokens", "must be at least 3", "512 is the usual N");
    profile.ph_threshold = p.get("ph_threshold", profile.ph_threshold);
    if (!(profile.ph_threshold > 0 && profile.ph_threshold <= 1)) {
      throw p.error("ph_threshold", "must be in (0, 1]", "1 is the full filtration; 0.5 keeps edges up to half the largest distance");
    }
    profile.ph_budget.memory_bytes = p.get("ph_memory", profile.ph_budget.memory_bytes / geometry::kBytesPerGiB) * geometry::kBytesPerGiB;
    profile.ph_budget.seconds = p.get("ph_seconds", profile.ph_budget.seconds);
    if (profile.ph_budget.memory_bytes < 0) throw p.error("ph_memory", "must not be negative", "give GiB, or 0 for no limit");
    if (profile.ph_budget.seconds < 0) throw p.error("ph_seconds", "must not be negative", "give seconds, or 0 for no limit");
    const auto norm = p.get<std::string>("topo_norm", "linf");
    if (norm != "linf" && norm != "l2") throw p.error("topo_norm", "unknown norm '" + norm + "'", "use linf or l2");
    if (norm == "l2") profile.topo_internal_p = 2.0;
    p.finish();
    spec.profile = profile;
  } else {
    top.section("profile");
  }
  for (size_t i = 0; i < spec.arms.size(); ++i) {
    if (schedule_needs_profile(spec.arms[i].schedule) && !spec.profile) {
      throw ConfigError("arms[" + std::to_string(i) + "].schedule",
                        "'" + spec.arms[i].schedule + "' is guided by a work profile, but the experiment has no profile section",
                        "add profile: {arm: NAME} naming the uniform arm to profile", doc.where("arms[" + std::to_string(i) + "]"));
    }
  }
  top.finish();
  return spec;
}

std::vector<ArmPlan> plan_experiment(const ExperimentSpec& spec) {
  std::vector<ArmPlan> plans;
  auto config_of = [&](const ArmSpec& arm) {
    auto overrides = spec.overrides;
    overrides.insert(overrides.end(), arm.overrides.begin(), arm.overrides.end());
    return load_run_config(spec.base, overrides);
  };
  int64_t budget = spec.budget.params.value_or(0);
  if (!spec.budget.reference.empty()) {
    for (const auto& arm : spec.arms) {
      if (arm.name == spec.budget.reference) budget = counted_parameters(config_of(arm).model, spec.budget.count);
    }
  }
  for (const auto& arm : spec.arms) {
    ArmPlan plan;
    plan.spec = arm;
    plan.config = config_of(arm);
    plan.budget = budget;
    if (!arm.solve.empty()) {
      IsoProblem problem;
      problem.variant = plan.config.model;
      problem.budget = budget;
      problem.count = spec.budget.count;
      problem.tolerance = spec.budget.tolerance;
      for (const auto& free : arm.solve) problem.free.push_back(parse_free_dimension(free, problem.variant));
      const auto solution = solve_iso(problem);
      plan.config.model = solution.config;
      plan.dimensions = solution.dimensions;
      plan.explanation = solution.explanation;
    }
    // A schedule keeps the uniform budget exactly, so the uniform count is the arm's count.
    plan.counts = count_parameters(plan.config.model);
    plan.params = counted_parameters(plan.config.model, spec.budget.count);
    plan.rel_error = static_cast<double>(plan.params - budget) / static_cast<double>(budget);
    plan.within_tolerance = std::abs(plan.rel_error) <= spec.budget.tolerance;
    if (!plan.within_tolerance && plan.explanation.empty()) {
      plan.explanation = arm.solve.empty() ? "the arm's shape is fixed (no solve list) and misses the budget"
                                           : "no shape in the solve ranges meets the tolerance";
    }
    plans.push_back(plan);
  }
  return plans;
}

std::string run_dir(const std::string& run_root, const std::string& arm, int64_t seed) {
  return (fs::path(run_root) / arm / ("seed-" + std::to_string(seed))).string();
}

}  // namespace ffnshape::experiment
