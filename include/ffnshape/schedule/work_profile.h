// The work profile of a reference model as schedules read it: per-layer geometric work and intrinsic
// dimension, from the JSON `ffnshape profile` writes. The file holds more (residual norms,
// sensitivities, provenance); its layout is documented in README.md, "Profiling a model":
//
//   { "format": "ffnshape-profile", "version": 1, "n_layers": L,
//     "layers": [ { "layer": 0,
//                   "work": { "topo": { "hyperbolic": 0.12, ... }, "gw": {...}, "shift": {...} },
//                   "intrinsic_dimension": { "in": 11.2, "out": 10.9 }, ... }, ... ], ... }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ffnshape::schedule {

struct WorkProfile {
  std::string source;                                // the file it came from
  int64_t n_layers = 0;
  std::map<std::string, std::vector<double>> work;   // "topo:hyperbolic" -> one value per layer
  std::vector<double> intrinsic_dimension;           // TwoNN estimate of each layer's X_l

  // The per-layer work of "STAT:GEOMETRY"; a ConfigError naming the file when it was not measured.
  const std::vector<double>& work_of(const std::string& stat_geometry) const;
};

// Reads a profile JSON. A missing, malformed or incomplete file is a ConfigError that names it.
WorkProfile read_work_profile(const std::string& path);

}  // namespace ffnshape::schedule
