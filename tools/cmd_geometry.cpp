// ffnshape geometry ph CLOUD.csv [--geometry G] [--radius R] [--threshold T] [--ph-memory GIB] [--ph-seconds S] [--json]
// ffnshape geometry gw A.csv B.csv [--geometry G] [--radius R] [--solver cg|entropic] [--epsilon E] [--json]
// ffnshape geometry topo A.csv B.csv [--geometry G] [--radius R] [--topo-norm linf|l2] [--ph-memory GIB]
//                       [--ph-seconds S] [--json]
// ffnshape geometry shift A.csv B.csv [--geometry G] [--radius R] [--json]
//
// The geometry library's statistics on point clouds read from CSV files (cloud_csv.h): a cloud's H1
// persistence diagram, and the Gromov-Wasserstein, H1-topology and shift distances between two clouds.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>

#include "cloud_csv.h"
#include "commands.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/geometry/gromov.h"
#include "ffnshape/geometry/metrics.h"
#include "ffnshape/geometry/persistence.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::cli {
namespace {


struct GeometryCliOptions {
  std::string a, b;
  std::string geometry = "raw";
  double radius = 0.8;
  double threshold = std::numeric_limits<double>::infinity();
  std::string solver = "cg";
  std::optional<double> epsilon;
  std::string topo_norm = "linf";
  double ph_memory_gib = geometry::PersistenceBudget{}.memory_bytes / geometry::kBytesPerGiB;
  double ph_seconds = geometry::PersistenceBudget{}.seconds;
  bool json = false;
};

geometry::PersistenceBudget budget(const GeometryCliOptions& o) { return {o.ph_memory_gib * geometry::kBytesPerGiB, o.ph_seconds}; }

geometry::GeometryOptions geometry_options(const GeometryCliOptions& o) {
  return {geometry::parse_geometry(o.geometry), o.radius};
}

// Spherical and hyperbolic distances need each point's direction: name the line of a zero point.
CsvCloud read_cloud(const std::string& path, const geometry::GeometryOptions& go) {
  auto cloud = read_cloud_csv(path);
  if (go.geometry == geometry::Geometry::raw) return cloud;
  const auto zero = (cloud.points.norm(2, 1) == 0).nonzero();
  if (zero.size(0) > 0) {
    const auto i = zero[0][0].item<int64_t>();
    throw DataError(path + ":" + std::to_string(cloud.line[static_cast<size_t>(i)]) + ": point " +
                    std::to_string(i + 1) + " is the zero vector, which has no direction under " +
                    geometry::to_string(go.geometry) + " geometry\n  fix: remove it, or use --geometry raw");
  }
  return cloud;
}

nlohmann::json describe(const CsvCloud& c) {
  return {{"file", c.path}, {"points", c.size()}, {"dimensions", c.dimensions()}};
}

// The context fields every JSON answer carries.
nlohmann::json context(const geometry::GeometryOptions& go) {
  nlohmann::json j{{"geometry", geometry::to_string(go.geometry)}};
  if (go.geometry == geometry::Geometry::hyperbolic) j["radius"] = go.radius;
  return j;
}

std::string geometry_label(const geometry::GeometryOptions& go) {
  std::string label = std::string(geometry::to_string(go.geometry)) + " geometry";
  if (go.geometry == geometry::Geometry::hyperbolic) {
    char radius[32];
    std::snprintf(radius, sizeof radius, " (radius %g)", go.radius);
    label += radius;
  }
  return label;
}

void print_cloud(const char* label, const CsvCloud& c) {
  std::printf("%-8s %s: %lld points in %lld dimensions\n", label, c.path.c_str(), static_cast<long long>(c.size()),
              static_cast<long long>(c.dimensions()));
}

nlohmann::json finite_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

int run_ph(const GeometryCliOptions& o) {
  const auto go = geometry_options(o);
  const auto cloud = read_cloud(o.a, go);
  const auto diagram = geometry::rips_h1(geometry::pairwise_distances(cloud.points, go), o.threshold, budget(o));
  if (o.json) {
    auto j = describe(cloud);
    j.update(context(go));
    j["threshold"] = finite_or_null(o.threshold);
    j["h1"] = nlohmann::json::array();
    for (const auto& p : diagram) j["h1"].push_back({p.birth, finite_or_null(p.death)});
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  print_cloud("cloud", cloud);
  std::printf("%-8s %s\n", "metric", geometry_label(go).c_str());
  std::printf("H1       %zu %s of the Vietoris-Rips filtration", diagram.size(), diagram.size() == 1 ? "pair" : "pairs");
  if (std::isfinite(o.threshold)) std::printf(" (edges up to %g)", o.threshold);
  std::printf("\n");
  if (diagram.empty()) return kExitOk;
  std::printf("%14s %14s %14s\n", "birth", "death", "persistence");
  for (const auto& p : diagram) std::printf("%14.8g %14.8g %14.8g\n", p.birth, p.death, p.death - p.birth);
  return kExitOk;
}

// gw, topo and shift: one number between two clouds.
int run_pair(const std::string& statistic, const GeometryCliOptions& o) {
  const auto go = geometry_options(o);
  geometry::GwOptions gw;
  if (statistic == "gw") {
    gw.solver = geometry::parse_gw_solver(o.solver);
    if (o.epsilon) {
      if (gw.solver != geometry::GwSolver::entropic) {
        throw ConfigError("--epsilon", "applies only to the entropic solver", "add --solver entropic, or drop --epsilon");
      }
      gw.epsilon = *o.epsilon;
    }
  }
  const auto a = read_cloud(o.a, go);
  const auto b = read_cloud(o.b, go);
  nlohmann::json j{{"a", describe(a)}, {"b", describe(b)}};
  j.update(context(go));
  std::string detail;
  double value = 0;
  if (statistic == "shift") {
    if (a.size() != b.size() || a.dimensions() != b.dimensions()) {
      throw DataError("shift needs corresponding points, but " + a.path + " is " + std::to_string(a.size()) + "x" +
                      std::to_string(a.dimensions()) + " and " + b.path + " is " + std::to_string(b.size()) + "x" +
                      std::to_string(b.dimensions()) +
                      "\n  fix: give two clouds of the same shape whose rows correspond (gw and topo compare any two clouds)");
    }
    value = geometry::shift(a.points, b.points, go);
    detail = "mean distance between corresponding points";
  } else {
    const auto da = geometry::pairwise_distances(a.points, go);
    const auto db = geometry::pairwise_distances(b.points, go);
    if (statistic == "gw") {
      value = geometry::gromov_wasserstein(da, db, gw);
      j["solver"] = geometry::to_string(gw.solver);
      detail = std::string("Gromov-Wasserstein, square loss, uniform weights, ") + geometry::to_string(gw.solver) + " solver";
      if (gw.solver == geometry::GwSolver::entropic) {
        j["epsilon"] = gw.epsilon;
        detail += ", epsilon " + nlohmann::json(gw.epsilon).dump();
      }
    } else {
      const auto ha = geometry::rips_h1(da, std::numeric_limits<double>::infinity(), budget(o));
      const auto hb = geometry::rips_h1(db, std::numeric_limits<double>::infinity(), budget(o));
      const bool l2 = o.topo_norm == "l2";
      value = geometry::diagram_distance(ha, hb, 2.0, l2 ? 2.0 : std::numeric_limits<double>::infinity());
      j["a"]["h1_pairs"] = ha.size();
      j["b"]["h1_pairs"] = hb.size();
      j["q"] = 2;
      j["internal_norm"] = l2 ? "L2" : "L-infinity";
      detail = "2-Wasserstein distance between the H1 diagrams, " + std::string(l2 ? "L2" : "L-infinity") +
               " ground norm, " + std::to_string(ha.size()) + " and " + std::to_string(hb.size()) + " pairs";
    }
  }
  j[statistic] = finite_or_null(value);
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  print_cloud("a", a);
  print_cloud("b", b);
  std::printf("%-8s %s\n", "metric", geometry_label(go).c_str());
  std::printf("%-8s %.10g  (%s)\n", statistic.c_str(), value, detail.c_str());
  return kExitOk;
}

void add_geometry_options(CLI::App* sub, GeometryCliOptions& o) {
  sub->add_option("--geometry", o.geometry, "raw | spherical | hyperbolic (default raw)");
  sub->add_option("--radius", o.radius, "hyperbolic: radius of the points in the Poincare ball, in (0, 1) (default 0.8)");
  sub->add_flag("--json", o.json, "Print JSON");
}

}  // namespace

Subcommand add_geometry_command(CLI::App& app) {
  auto o = std::make_shared<GeometryCliOptions>();
  auto* geometry = app.add_subcommand("geometry", "Geometry of point clouds in CSV files: H1 persistence, GW, topology, shift");
  geometry->require_subcommand(1);
  const std::string csv = " (CSV: one point per line, comma-separated; '#' lines are comments)";

  auto* ph = geometry->add_subcommand("ph", "H1 persistence pairs (birth, death) of the cloud's Vietoris-Rips filtration");
  ph->add_option("CLOUD", o->a, "Point cloud" + csv)->required();
  add_geometry_options(ph, *o);
  ph->add_option("--threshold", o->threshold, "Leave out edges longer than this (classes alive there never die)");

  auto* gw = geometry->add_subcommand("gw", "Gromov-Wasserstein discrepancy between two clouds' distance matrices");
  gw->add_option("--solver", o->solver, "cg | entropic (default cg)");
  gw->add_option("--epsilon", o->epsilon, "entropic: regularisation, in squared-distance units (default 5e-3)");

  auto* topo = geometry->add_subcommand("topo", "2-Wasserstein distance between two clouds' H1 persistence diagrams");
  topo->add_option("--topo-norm", o->topo_norm, "Ground norm of the diagram distance: linf (default) or l2")
      ->check(CLI::IsMember({"linf", "l2"}));
  for (auto* sub : {ph, topo}) {
    sub->add_option("--ph-memory", o->ph_memory_gib, "Memory budget of one persistence diagram, GiB (0: no limit)")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--ph-seconds", o->ph_seconds, "Time budget of one persistence diagram, seconds (0: no limit)")
        ->check(CLI::NonNegativeNumber);
  }
  auto* shift = geometry->add_subcommand("shift", "Mean distance between corresponding points of two clouds of the same shape");
  for (auto* sub : {gw, topo, shift}) {
    sub->add_option("A", o->a, "First point cloud" + csv)->required();
    sub->add_option("B", o->b, "Second point cloud" + csv)->required();
    add_geometry_options(sub, *o);
  }
  return {geometry, [o, ph, gw, topo] {
            if (ph->parsed()) return run_ph(*o);
            return run_pair(gw->parsed() ? "gw" : topo->parsed() ? "topo" : "shift", *o);
          }};
}

}  // namespace ffnshape::cli
