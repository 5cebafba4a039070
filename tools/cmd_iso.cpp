// ffnshape iso CONFIG (--budget N | --match REF.yaml) --free a,b [--count total|non_embedding]
//              [--tolerance REL] [--set k=v]... [--out solved.yaml] [--json]
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/params/iso.h"
#include "format.h"

namespace ffnshape::cli {
namespace {

struct IsoOptions {
  std::string config;
  std::string budget;
  std::string match;
  std::vector<std::string> free;
  std::string count = "total";
  double tolerance = 1e-5;
  std::vector<std::string> overrides;
  std::string out;
  bool json = false;
};

// "113283840", "113M", "1.5B", "906e6" -> parameters.
int64_t parse_budget(const std::string& text) {
  double scale = 1;
  std::string number = text;
  if (!number.empty()) {
    switch (number.back()) {
      case 'K': case 'k': scale = 1e3; break;
      case 'M': case 'm': scale = 1e6; break;
      case 'B': case 'b': case 'G': case 'g': scale = 1e9; break;
      default: break;
    }
    if (scale != 1) number.pop_back();
  }
  try {
    size_t used = 0;
    const double value = std::stod(number, &used) * scale;
    if (used == number.size() && value >= 1 && std::floor(value) == value) return static_cast<int64_t>(value);
  } catch (const std::exception&) {
  }
  throw ConfigError("--budget", "'" + text + "' is not a positive whole parameter count",
                    "write e.g. 113283840, 113M or 1.2B");
}

int run(const IsoOptions& options) {
  auto run_config = load_run_config(options.config, options.overrides);
  IsoProblem problem;
  problem.variant = run_config.model;
  problem.tolerance = options.tolerance;
  problem.count = options.count == "total" ? BudgetCount::total : BudgetCount::non_embedding;
  std::string budget_source = "--budget";
  if (!options.match.empty()) {
    problem.budget = counted_parameters(load_run_config(options.match).model, problem.count);
    budget_source = options.match;
  } else {
    problem.budget = parse_budget(options.budget);
  }
  for (const auto& spec : options.free) problem.free.push_back(parse_free_dimension(spec, problem.variant));

  const auto start = std::chrono::steady_clock::now();
  const auto solution = solve_iso(problem);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto counts = count_parameters(solution.config);

  if (solution.within_tolerance && !options.out.empty()) {
    run_config.model = solution.config;
    std::ofstream out(options.out);
    out << to_yaml(run_config);
    if (!out) throw std::runtime_error("cannot write '" + options.out + "'");
  }
  if (options.json) {
    nlohmann::json j = {{"config", options.config},
                        {"budget", problem.budget},
                        {"budget_source", budget_source},
                        {"count", to_string(problem.count)},
                        {"params", solution.params},
                        {"total", counts.total()},
                        {"non_embedding", counts.non_embedding()},
                        {"attention", counts.attention},
                        {"ffn", counts.ffn},
                        {"rel_error", solution.rel_error},
                        {"tolerance", problem.tolerance},
                        {"within_tolerance", solution.within_tolerance},
                        {"dimensions", solution.dimensions},
                        {"shape", describe_shape(solution.config)},
                        {"shapes_checked", solution.shapes_checked},
                        {"seconds", seconds}};
    if (!solution.explanation.empty()) j["explanation"] = solution.explanation;
    if (!options.out.empty() && solution.within_tolerance) j["out"] = options.out;
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("budget   %s %s parameters (%s)\n", with_commas(problem.budget).c_str(), to_string(problem.count),
                budget_source.c_str());
    std::printf("solved   %s  (error %+.5f%%, tolerance %.5f%%)\n", with_commas(solution.params).c_str(),
                100.0 * solution.rel_error, 100.0 * problem.tolerance);
    for (const auto& [name, value] : solution.dimensions) std::printf("  %-12s %lld\n", name.c_str(), static_cast<long long>(value));
    std::printf("shape    %s\n", describe_shape(solution.config).c_str());
    std::printf("split    attention %s, ffn %s (%.1f%% / %.1f%% of non-embedding)\n",
                with_commas(counts.attention).c_str(), with_commas(counts.ffn).c_str(), 100.0 * counts.attention_share(),
                100.0 * counts.ffn_share());
    std::printf("searched %lld shapes in %.3f s\n", static_cast<long long>(solution.shapes_checked), seconds);
    if (!solution.explanation.empty()) std::printf("not met: %s\n", solution.explanation.c_str());
    if (solution.within_tolerance && !options.out.empty()) std::printf("wrote    %s\n", options.out.c_str());
  }
  if (!solution.within_tolerance) {
    std::cerr << "error: the budget cannot be met within the tolerance; the closest shape is shown above"
              << (options.out.empty() ? "" : " and was not written") << "\n";
    return kExitRuntime;
  }
  return kExitOk;
}

}  // namespace

Subcommand add_iso_command(CLI::App& app) {
  auto options = std::make_shared<IsoOptions>();
  auto* sub = app.add_subcommand("iso", "Solve free dimensions of a config to a parameter budget");
  sub->add_option("config", options->config, "Variant config YAML")->required()->check(CLI::ExistingFile);
  auto* budget = sub->add_option("--budget", options->budget, "Parameter budget: 113283840, 113M, 1.2B");
  auto* match = sub->add_option("--match", options->match, "Use this reference config's count as the budget")
                    ->check(CLI::ExistingFile);
  budget->excludes(match);
  sub->add_option("--free", options->free,
                  "Free dimensions, comma-separated: NAME[=MIN..MAX][/MULTIPLE] with NAME one of d_model, n_layers, "
                  "n_heads, n_kv_heads, head_dim, ffn.hidden, ffn.k")
      ->required()
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--count", options->count, "What the budget counts")->check(CLI::IsMember({"total", "non_embedding"}));
  sub->add_option("--tolerance", options->tolerance, "Relative tolerance (1e-5 = 0.001%)")->check(CLI::PositiveNumber);
  sub->add_option("--set", options->overrides, "Override a key of CONFIG: dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--out", options->out, "Write the solved config here (only when within tolerance)");
  sub->add_flag("--json", options->json, "Print JSON");
  sub->callback([budget, match] {
    if (budget->count() == 0 && match->count() == 0) throw CLI::RequiredError("--budget or --match");
  });
  return {sub, [options] { return run(*options); }};
}

}  // namespace ffnshape::cli
