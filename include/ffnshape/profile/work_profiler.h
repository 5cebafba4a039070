// Geometric work of each layer's FFN in a trained model (`ffnshape profile`).
//
// N tokens are sampled (seeded) from validation windows; one forward pass over those windows captures,
// for every layer l, X_l (the residual stream entering the FFN sub-layer) and Y_l (leaving it; for an
// hourglass FFN the whole K-stack is the layer's FFN). Each layer then gets:
//   shift  mean distance between x_i and y_i (correspondence kept)
//   gw     Gromov-Wasserstein discrepancy between (D_X, uniform) and (D_Y, uniform)
//   topo   2-Wasserstein distance between the H1 Vietoris-Rips diagrams of X_l and Y_l, with the
//          L-infinity ground norm (Hera's and GUDHI's default) or L2 (topo_internal_p); each diagram
//          under a persistence budget, and optionally a Rips threshold (ph_threshold)
// under the raw, spherical and hyperbolic geometries (any subset), plus mean residual norms and the
// TwoNN intrinsic dimension of X_l and Y_l (Euclidean distances).
//
// Diagnostics on request: the validation-loss change when one layer's FFN update y - x is ablated,
// scaled or noised (sensitivity), the same for adjacent layer pairs against the sum of their single
// changes (local additivity), and the Spearman correlation of each work profile with each sensitivity.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ffnshape/config/run_config.h"
#include "ffnshape/geometry/gromov.h"
#include "ffnshape/geometry/metrics.h"
#include "ffnshape/geometry/persistence.h"
#include "ffnshape/nn/model.h"

namespace ffnshape::profile {

// A change to one layer's FFN update delta = Y_l - X_l: ablate (Y = X), scale (Y = X + s delta) or
// noise (Y = X + delta + s * rms(delta) * N(0, 1)).
struct Perturbation {
  enum class Kind { ablate, scale, noise } kind = Kind::ablate;
  double strength = 0;
  std::string name() const;  // "ablate", "scale:0.5", "noise:0.1"
};
Perturbation parse_perturbation(const std::string& text);  // throws ConfigError naming --perturb

struct ProfileOptions {
  int64_t tokens = 512;     // N, the points of every cloud
  uint64_t seed = 0;
  std::vector<std::string> statistics{"shift", "gw", "topo"};
  std::vector<geometry::Geometry> geometries{geometry::Geometry::raw, geometry::Geometry::spherical,
                                             geometry::Geometry::hyperbolic};
  double radius = 0.8;      // hyperbolic geometry
  geometry::GwOptions gw;
  // topo: Rips edges up to ph_threshold times the layer's largest distance (over X and Y, per geometry);
  // 1 is the full filtration. Below 1, loops still alive there end at the threshold.
  double ph_threshold = 1.0;
  geometry::PersistenceBudget ph_budget;  // per diagram; past it the profile stops, naming the layer
  double topo_internal_p = std::numeric_limits<double>::infinity();  // ground norm: infinity (L-inf) or 2 (L2)
  std::vector<Perturbation> perturbations;  // empty: no sensitivity diagnostics
  bool additivity = false;                  // adjacent layer pairs, for every perturbation
  int64_t eval_batches = 4;                 // validation batches for the loss diagnostics
  int threads = 0;                          // workers for the per-layer statistics (0: all cores)
};

struct LayerProfile {
  std::map<std::string, std::map<std::string, double>> work;  // work[stat][geometry]
  double residual_norm_in = 0, residual_norm_out = 0;          // mean |x_i|, |y_i|
  double intrinsic_dimension_in = 0, intrinsic_dimension_out = 0;
  std::map<std::string, double> sensitivity;  // perturbation name -> validation-loss change
};

struct PairAdditivity {
  int64_t first = 0, second = 0;  // layers
  std::string perturbation;
  double joint = 0;               // loss change perturbing both
  double sum = 0;                 // sum of the two single changes
};

struct ModelProfile {
  std::vector<LayerProfile> layers;
  std::vector<PairAdditivity> additivity;
  std::map<std::string, double> spearman;  // "STAT:GEOMETRY|PERTURBATION" -> rank correlation
  double base_loss = 0;                    // validation loss without perturbation (NaN when not measured)
  int64_t windows = 0;                     // validation windows the tokens came from
  double seconds = 0;
};

// Captured clouds of one forward pass: x[l] and y[l] are (N, d_model) float32 on the CPU.
struct LayerClouds {
  std::vector<torch::Tensor> x, y;
};

// Runs `model` over `windows` (batch, seq) and keeps N positions chosen with `seed`.
LayerClouds capture_clouds(nn::TransformerLM& model, const torch::Tensor& windows, int64_t tokens, uint64_t seed);

// The whole profile: clouds from `windows`, statistics, and the diagnostics measured on `val_batches`.
ModelProfile profile_model(nn::TransformerLM& model, const torch::Tensor& windows,
                           const std::vector<std::pair<torch::Tensor, torch::Tensor>>& val_batches,
                           const ProfileOptions& options);

// Profiles the newest checkpoint of a run directory (or a checkpoint folder) on `data` (default: the
// run's data.val) in fp32, writes the JSON to `out_path` with provenance, and returns the profile.
ModelProfile profile_run(const std::string& run_dir_or_checkpoint, const ProfileOptions& options,
                         const std::string& out_path, const std::string& data = "");

// Spearman rank correlation (average ranks for ties); NaN when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

// The profile JSON (format "ffnshape-profile", read by schedule/work_profile.h and
// scripts/plot_profile.py) with `provenance` (checkpoint, data, settings) merged in.
void write_profile_json(const std::string& path, const ModelProfile& profile, const ProfileOptions& options,
                        const std::map<std::string, std::string>& provenance);

}  // namespace ffnshape::profile
