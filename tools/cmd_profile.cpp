// ffnshape profile RUN_DIR_OR_CHECKPOINT --out profile.json [--tokens N] [--seed S]
//                  [--stats shift,gw,topo] [--geometries raw,spherical,hyperbolic] [--radius R]
//                  [--gw-solver cg|entropic] [--epsilon E] [--perturb ablate,scale:0.5,noise:0.1]
//                  [--additivity] [--data GLOB] [--eval-batches N] [--threads N]
//                  [--ph-threshold F] [--ph-memory GIB] [--ph-seconds S] [--topo-norm linf|l2]
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "commands.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/profile/work_profiler.h"

namespace ffnshape::cli {
namespace {


struct ProfileCliOptions {
  std::string target;
  std::string out;
  std::string data;
  int64_t tokens = 512;
  uint64_t seed = 0;
  std::vector<std::string> stats{"shift", "gw", "topo"};
  std::vector<std::string> geometries{"raw", "spherical", "hyperbolic"};
  double radius = 0.8;
  std::string gw_solver = "cg";
  double epsilon = 0;
  std::vector<std::string> perturb;
  bool additivity = false;
  int64_t eval_batches = 4;
  int threads = 0;
  double ph_threshold = 1.0;
  double ph_memory_gib = geometry::PersistenceBudget{}.memory_bytes / geometry::kBytesPerGiB;
  double ph_seconds = geometry::PersistenceBudget{}.seconds;
  std::string topo_norm = "linf";
};

int run(const ProfileCliOptions& o) {
  profile::ProfileOptions options;
  options.tokens = o.tokens;
  options.seed = o.seed;
  options.statistics = o.stats;
  options.geometries.clear();
  for (const auto& g : o.geometries) options.geometries.push_back(geometry::parse_geometry(g));
  options.radius = o.radius;
  options.gw.solver = geometry::parse_gw_solver(o.gw_solver);
  if (o.epsilon > 0) options.gw.epsilon = o.epsilon;
  for (const auto& p : o.perturb) options.perturbations.push_back(profile::parse_perturbation(p));
  options.additivity = o.additivity;
  if (options.additivity && options.perturbations.empty()) {
    throw ConfigError("--additivity", "needs at least one --perturb", "add e.g. --perturb ablate");
  }
  options.eval_batches = o.eval_batches;
  options.threads = o.threads;
  options.ph_threshold = o.ph_threshold;
  options.ph_budget = {o.ph_memory_gib * geometry::kBytesPerGiB, o.ph_seconds};
  options.topo_internal_p = o.topo_norm == "l2" ? 2.0 : std::numeric_limits<double>::infinity();

  const auto result = profile::profile_run(o.target, options, o.out, o.data);
  std::printf("%5s", "layer");
  for (const auto& stat : options.statistics) {
    for (auto g : options.geometries) std::printf(" %15s", (stat + ":" + geometry::to_string(g)).c_str());
  }
  std::printf(" %9s %9s %6s\n", "|x|", "|y|", "d_int");
  for (size_t l = 0; l < result.layers.size(); ++l) {
    const auto& layer = result.layers[l];
    std::printf("%5zu", l);
    for (const auto& stat : options.statistics) {
      for (auto g : options.geometries) std::printf(" %15.5g", layer.work.at(stat).at(geometry::to_string(g)));
    }
    std::printf(" %9.3f %9.3f %6.2f\n", layer.residual_norm_in, layer.residual_norm_out, layer.intrinsic_dimension_in);
  }
  if (!std::isnan(result.base_loss)) std::printf("validation loss without perturbation: %.4f\n", result.base_loss);
  std::printf("profiled in %.1f s; wrote %s\n", result.seconds, o.out.c_str());
  return kExitOk;
}

}  // namespace

Subcommand add_profile_command(CLI::App& app) {
  auto o = std::make_shared<ProfileCliOptions>();
  auto* sub = app.add_subcommand("profile", "Geometric work of every layer's FFN in a trained model");
  sub->add_option("target", o->target, "Run directory or checkpoint folder")->required();
  sub->add_option("--out", o->out, "Profile JSON to write")->required();
  sub->add_option("--data", o->data, "Validation shard glob (default the run's data.val)");
  sub->add_option("--tokens", o->tokens, "Tokens sampled for the clouds (N)");
  sub->add_option("--seed", o->seed, "Seed of the token sample and the noise");
  sub->add_option("--stats", o->stats, "Statistics: shift,gw,topo")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::IsMember({"shift", "gw", "topo"}));
  sub->add_option("--geometries", o->geometries, "Geometries: raw,spherical,hyperbolic")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(CLI::IsMember({"raw", "spherical", "hyperbolic"}));
  sub->add_option("--radius", o->radius, "Radius of the hyperbolic geometry's points in the Poincare ball, in (0, 1)");
  sub->add_option("--gw-solver", o->gw_solver, "Gromov-Wasserstein solver")->check(CLI::IsMember({"cg", "entropic"}));
  sub->add_option("--epsilon", o->epsilon, "Entropic solver's regularisation");
  sub->add_option("--perturb", o->perturb, "Sensitivity diagnostics: ablate, scale:S, noise:S (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_flag("--additivity", o->additivity, "Also perturb adjacent layer pairs (local additivity)");
  sub->add_option("--eval-batches", o->eval_batches, "Validation batches for the loss diagnostics")
      ->check(CLI::PositiveNumber);
  sub->add_option("--threads", o->threads, "Workers for the statistics (0: all cores)");
  sub->add_option("--ph-threshold", o->ph_threshold,
                  "topo: Rips edges up to this fraction of the layer's largest distance (1: all; loops alive there end there)")
      ->check(CLI::Range(0.0, 1.0, "a fraction in (0, 1]") & CLI::PositiveNumber);
  sub->add_option("--ph-memory", o->ph_memory_gib, "topo: memory budget of one persistence diagram, GiB (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--ph-seconds", o->ph_seconds, "topo: time budget of one persistence diagram, seconds (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--topo-norm", o->topo_norm, "topo: ground norm of the diagram distance, linf (default) or l2")
      ->check(CLI::IsMember({"linf", "l2"}));
  return {sub, [o] { return run(*o); }};
}

}  // namespace ffnshape::cli
