// The statistics side of profiling: per-layer work under each geometry (in parallel over layers),
// the loss diagnostics, rank correlations, and the profile JSON.
#include "ffnshape/profile/work_profiler.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <numeric>
#include <thread>

#include "ffnshape/geometry/persistence.h"
#include "../common/text_file.h"
#include "model_passes.h"

namespace ffnshape::profile {
namespace {

bool wants(const ProfileOptions& o, const std::string& stat) {
  return std::find(o.statistics.begin(), o.statistics.end(), stat) != o.statistics.end();
}

// Runs the tasks on `threads` workers, each with one torch thread (the parallelism is across tasks);
// rethrows the first failure.
void run_parallel(const std::vector<std::function<void()>>& tasks, int threads) {
  const int workers = std::max(1, std::min<int>(threads, static_cast<int>(tasks.size())));
  const int torch_threads = torch::get_num_threads();
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    torch::set_num_threads(1);
    for (size_t i = next++; i < tasks.size(); i = next++) {
      try {
        tasks[i]();
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = tasks.size();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  torch::set_num_threads(torch_threads);
  if (failure) std::rethrow_exception(failure);
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double average = 0.5 * static_cast<double>(i + j) + 1.0;  // ties share their mean rank
    for (size_t k = i; k <= j; ++k) r[order[k]] = average;
    i = j + 1;
  }
  return r;
}

std::string internal_norm_name(double p) {
  if (std::isinf(p)) return "L-infinity";
  char text[32];
  std::snprintf(text, sizeof text, "L%g", p);
  return text;
}

// H1 diagram of one cloud under the profile's threshold and budget; deaths past the threshold end there.
// A budget overrun names the layer, the geometry and the cloud, and the settings that help.
geometry::PersistenceDiagram layer_diagram(const torch::Tensor& distances, double threshold, const ProfileOptions& o,
                                           size_t layer, geometry::Geometry g, const char* cloud) {
  try {
    auto diagram = geometry::rips_h1(distances, threshold, o.ph_budget);
    for (auto& p : diagram) p.death = std::min(p.death, threshold);
    return diagram;
  } catch (const geometry::PersistenceBudgetExceeded& e) {
    char fix[512];
    std::snprintf(fix, sizeof fix,
                  "\n  fix: fewer tokens (--tokens, now %lld), a Rips threshold (--ph-threshold, a fraction of the "
                  "largest distance, now %g), or a larger budget (--ph-memory GiB, --ph-seconds); in an experiment "
                  "file, the profile section's tokens, ph_threshold, ph_memory and ph_seconds",
                  static_cast<long long>(o.tokens), o.ph_threshold);
    throw geometry::PersistenceBudgetExceeded("layer " + std::to_string(layer) + ", " + geometry::to_string(g) +
                                              " geometry, " + cloud + ": " + e.what() + fix);
  }
}

double topology_work(const torch::Tensor& dx, const torch::Tensor& dy, const ProfileOptions& o, size_t layer,
                     geometry::Geometry g) {
  const double threshold = o.ph_threshold >= 1 ? std::numeric_limits<double>::infinity()
                                               : o.ph_threshold * std::max(dx.max().item<double>(), dy.max().item<double>());
  const auto hx = layer_diagram(dx, threshold, o, layer, g, "X (entering the FFN)");
  const auto hy = layer_diagram(dy, threshold, o, layer, g, "Y (leaving the FFN)");
  return geometry::diagram_distance(hx, hy, 2.0, o.topo_internal_p);
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::nan("");
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return std::nan("");
  }
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::nan("");
}

ModelProfile profile_model(nn::TransformerLM& model, const torch::Tensor& windows,
                           const std::vector<std::pair<torch::Tensor, torch::Tensor>>& val_batches,
                           const ProfileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  model->eval();
  ModelProfile result;
  result.windows = windows.size(0);
  const auto clouds = capture_clouds(model, windows, options.tokens, options.seed);
  const size_t n_layers = clouds.x.size();
  result.layers.resize(n_layers);

  // One task per layer and geometry, plus one per layer for norms and intrinsic dimension. Each
  // writes only its own slots, so no locking is needed.
  std::vector<std::map<std::string, double>> slots(n_layers * options.geometries.size());
  std::vector<std::function<void()>> tasks;
  for (size_t l = 0; l < n_layers; ++l) {
    tasks.emplace_back([&, l] {
      auto& layer = result.layers[l];
      layer.residual_norm_in = clouds.x[l].to(torch::kDouble).norm(2, 1).mean().item<double>();
      layer.residual_norm_out = clouds.y[l].to(torch::kDouble).norm(2, 1).mean().item<double>();
      layer.intrinsic_dimension_in = geometry::twonn_dimension(geometry::pairwise_distances(clouds.x[l]));
      layer.intrinsic_dimension_out = geometry::twonn_dimension(geometry::pairwise_distances(clouds.y[l]));
    });
    for (size_t g = 0; g < options.geometries.size(); ++g) {
      tasks.emplace_back([&, l, g] {
        const geometry::GeometryOptions go{options.geometries[g], options.radius};
        auto& out = slots[l * options.geometries.size() + g];
        if (wants(options, "shift")) out["shift"] = geometry::shift(clouds.x[l], clouds.y[l], go);
        if (!wants(options, "gw") && !wants(options, "topo")) return;
        const auto dx = geometry::pairwise_distances(clouds.x[l], go);
        const auto dy = geometry::pairwise_distances(clouds.y[l], go);
        if (wants(options, "gw")) out["gw"] = geometry::gromov_wasserstein(dx, dy, options.gw);
        if (wants(options, "topo")) out["topo"] = topology_work(dx, dy, options, l, options.geometries[g]);
      });
    }
  }
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  run_parallel(tasks, threads);
  for (size_t l = 0; l < n_layers; ++l) {
    for (size_t g = 0; g < options.geometries.size(); ++g) {
      for (const auto& [stat, value] : slots[l * options.geometries.size() + g]) {
        result.layers[l].work[stat][geometry::to_string(options.geometries[g])] = value;
      }
    }
  }

  result.base_loss = std::nan("");
  if (!options.perturbations.empty()) {
    result.base_loss = perturbed_loss(model, val_batches, {}, {}, options.seed);
    for (const auto& p : options.perturbations) {
      std::vector<double> sensitivity;
      for (size_t l = 0; l < n_layers; ++l) {
        const double change =
            perturbed_loss(model, val_batches, {static_cast<int64_t>(l)}, p, options.seed + l) - result.base_loss;
        result.layers[l].sensitivity[p.name()] = change;
        sensitivity.push_back(change);
      }
      for (const auto& stat : options.statistics) {
        for (auto g : options.geometries) {
          std::vector<double> work;
          for (const auto& layer : result.layers) work.push_back(layer.work.at(stat).at(geometry::to_string(g)));
          result.spearman[stat + ":" + geometry::to_string(g) + "|" + p.name()] = spearman(work, sensitivity);
        }
      }
      if (options.additivity) {
        for (size_t l = 0; l + 1 < n_layers; ++l) {
          const std::vector<int64_t> pair{static_cast<int64_t>(l), static_cast<int64_t>(l + 1)};
          PairAdditivity a;
          a.first = pair[0];
          a.second = pair[1];
          a.perturbation = p.name();
          a.joint = perturbed_loss(model, val_batches, pair, p, options.seed + l) - result.base_loss;
          a.sum = sensitivity[l] + sensitivity[l + 1];
          result.additivity.push_back(a);
        }
      }
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void write_profile_json(const std::string& path, const ModelProfile& profile, const ProfileOptions& options,
                        const std::map<std::string, std::string>& provenance) {
  nlohmann::json layers = nlohmann::json::array();
  for (size_t l = 0; l < profile.layers.size(); ++l) {
    const auto& layer = profile.layers[l];
    nlohmann::json entry{{"layer", l},
                         {"work", layer.work},
                         {"residual_norm", {{"in", layer.residual_norm_in}, {"out", layer.residual_norm_out}}},
                         {"intrinsic_dimension",
                          {{"in", layer.intrinsic_dimension_in}, {"out", layer.intrinsic_dimension_out}}}};
    if (!layer.sensitivity.empty()) entry["sensitivity"] = layer.sensitivity;
    layers.push_back(entry);
  }
  nlohmann::json additivity = nlohmann::json::array();
  for (const auto& a : profile.additivity) {
    additivity.push_back({{"layers", {a.first, a.second}},
                          {"perturbation", a.perturbation},
                          {"joint", a.joint},
                          {"sum", a.sum},
                          {"ratio", a.sum != 0 ? a.joint / a.sum : std::nan("")}});
  }
  std::vector<std::string> geometries, perturbations;
  for (auto g : options.geometries) geometries.emplace_back(geometry::to_string(g));
  for (const auto& p : options.perturbations) perturbations.push_back(p.name());
  nlohmann::json settings{{"tokens", options.tokens},
                          {"seed", options.seed},
                          {"statistics", options.statistics},
                          {"geometries", geometries},
                          {"radius", options.radius},
                          {"gw_solver", geometry::to_string(options.gw.solver)},
                          {"gw_epsilon", options.gw.epsilon},
                          {"gw_tie_starts", options.gw.tie_starts},
                          {"ph_threshold", options.ph_threshold},
                          {"ph_memory_gib", options.ph_budget.memory_bytes / (1024.0 * 1024.0 * 1024.0)},
                          {"ph_seconds", options.ph_budget.seconds},
                          {"topo_internal_norm", internal_norm_name(options.topo_internal_p)},
                          {"perturbations", perturbations},
                          {"additivity", options.additivity},
                          {"eval_batches", options.eval_batches},
                          {"topo", "2-Wasserstein distance (" + internal_norm_name(options.topo_internal_p) +
                                       " ground metric) between H1 Vietoris-Rips diagrams"},
                          {"intrinsic_dimension", "TwoNN maximum likelihood on Euclidean distances"}};
  nlohmann::json j{{"format", "ffnshape-profile"},
                   {"version", 1},
                   {"n_layers", profile.layers.size()},
                   {"provenance", provenance},
                   {"settings", settings},
                   {"windows", profile.windows},
                   {"seconds", profile.seconds},
                   {"layers", layers}};
  if (!std::isnan(profile.base_loss)) j["base_loss"] = profile.base_loss;
  if (!profile.additivity.empty()) j["additivity"] = additivity;
  if (!profile.spearman.empty()) j["spearman"] = profile.spearman;
  write_text_file(path, j.dump(2) + "\n");
}

}  // namespace ffnshape::profile
