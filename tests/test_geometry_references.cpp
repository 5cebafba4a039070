// The geometry library on the clouds real activations produce and the tests elsewhere do not: exactly
// repeated points, clouds far from the origin (offsets up to 1e6 times the spread), directions at tiny
// angles and nearly antipodal. Every statistic is held to float64 references computed independently from
// the same points (tests/geometry_reference.py: numpy distances, GUDHI diagrams, GUDHI's Hera diagram
// distances, POT's Gromov-Wasserstein), in every geometry.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ffnshape/geometry/gromov.h"
#include "ffnshape/geometry/metrics.h"
#include "ffnshape/geometry/persistence.h"
#include "temp_dir.h"

using namespace ffnshape::geometry;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct CloudPair {
  std::string name;
  torch::Tensor x, y;  // corresponding points: y is x moved by a smooth map, so copies stay copies
};

// y = x + 0.3 tanh(x W): a layer-like update that maps equal points to equal points.
torch::Tensor moved(const torch::Tensor& x) {
  const auto w = torch::randn({x.size(1), x.size(1)}, torch::kDouble) / std::sqrt(static_cast<double>(x.size(1)));
  return x + 0.3 * torch::tanh(x.mm(w));
}

// `distinct` Gaussian points, each present twice, in shuffled order.
CloudPair repeated(int64_t distinct, int64_t dim) {
  const auto base = torch::randn({distinct, dim}, torch::kDouble);
  const auto base_y = moved(base);
  const auto order = torch::randperm(2 * distinct);
  return {"repeated" + std::to_string(2 * distinct), torch::cat({base, base}).index({order}),
          torch::cat({base_y, base_y}).index({order})};
}

// A unit-spread cloud moved `factor` times its spread away from the origin.
CloudPair offset(double factor) {
  const auto base = torch::randn({60, 5}, torch::kDouble);
  const auto direction = torch::randn({1, 5}, torch::kDouble);
  const auto shift = factor * direction / direction.norm();
  return {"offset" + std::to_string(static_cast<int64_t>(factor)), base + shift, moved(base) + shift};
}

// Directions within about 1e-7 rad of e_0 (near 0), or of e_0 and -e_0 (near pi).
CloudPair narrow_directions(bool antipodal) {
  auto axis = torch::zeros({50, 6}, torch::kDouble);
  axis.select(1, 0).fill_(1.0);
  if (antipodal) axis.slice(0, 25).neg_();
  const auto x = axis + 1e-7 * torch::randn({50, 6}, torch::kDouble);
  const auto y = axis + 1e-7 * torch::randn({50, 6}, torch::kDouble);
  return {antipodal ? "near_pi" : "near_zero", x, y};
}

std::vector<CloudPair> clouds() {
  torch::manual_seed(94);
  return {repeated(47, 8), repeated(100, 16), offset(1e3), offset(1e6), narrow_directions(false),
          narrow_directions(true)};
}

void write_binary(const std::string& path, const torch::Tensor& t) {
  const auto c = t.contiguous();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(c.data_ptr<double>()),
                                              static_cast<std::streamsize>(c.numel() * sizeof(double)));
}

torch::Tensor read_binary(const std::string& path, int64_t n) {
  auto t = torch::empty({n, n}, torch::kDouble);
  std::ifstream(path, std::ios::binary).read(reinterpret_cast<char*>(t.data_ptr<double>()),
                                             static_cast<std::streamsize>(n * n * sizeof(double)));
  return t;
}

PersistenceDiagram diagram_of(const nlohmann::json& pairs) {
  PersistenceDiagram d;
  for (const auto& p : pairs) d.push_back({p[0].get<double>(), p[1].get<double>()});
  return d;
}

// Bars longer than `tolerance` agree pair for pair (both sorted by birth, then death) to within it.
void expect_same_bars(const PersistenceDiagram& ours, const PersistenceDiagram& reference, double tolerance) {
  auto long_bars = [&](const PersistenceDiagram& d) {
    PersistenceDiagram kept;
    for (const auto& p : d) {
      if (p.death - p.birth > tolerance) kept.push_back(p);
    }
    return kept;
  };
  const auto a = long_bars(ours), b = long_bars(reference);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_NEAR(a[k].birth, b[k].birth, tolerance) << "bar " << k;
    EXPECT_NEAR(a[k].death, b[k].death, tolerance) << "bar " << k;
  }
}

// Within `relative` of the reference, or `absolute` where the value is at rounding level.
void expect_close(double ours, double reference, double relative, double absolute, const char* what) {
  EXPECT_LE(std::abs(ours - reference), relative * std::abs(reference) + absolute)
      << what << ": ours " << ours << ", reference " << reference;
}

}  // namespace

TEST(GeometryReferences, RepeatedOffsetAndNarrowCloudsMatchNumpyGudhiAndPot) {
  if (std::system("/usr/bin/python3 -c 'import numpy, ot, gudhi.hera' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 lacks numpy, POT or GUDHI (apt-get install python3-pot python3-gudhi)";
  }
  ffnshape::testing::TempDir dir("ffnshape_geometry_references");
  const auto pairs = clouds();
  const std::vector<GeometryOptions> geometries = {{Geometry::raw}, {Geometry::spherical}, {Geometry::hyperbolic, 0.8}};
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : pairs) {
    for (const auto& g : geometries) {
      const std::string name = c.name + "_" + to_string(g.geometry);
      write_binary(dir.file(name + "_x.bin"), c.x);
      write_binary(dir.file(name + "_y.bin"), c.y);
      cases.push_back({{"name", name}, {"geometry", to_string(g.geometry)}, {"radius", g.radius},
                       {"n", c.x.size(0)}, {"dim", c.x.size(1)}});
    }
  }
  std::ofstream(dir.file("cases.json")) << cases.dump();
  const std::string script = std::string(FFNSHAPE_SOURCE_DIR) + "/tests/geometry_reference.py";
  ASSERT_EQ(std::system(("/usr/bin/python3 " + script + " " + dir.path().string()).c_str()), 0);
  const auto results = nlohmann::json::parse(std::ifstream(dir.file("results.json")));

  for (const auto& c : pairs) {
    for (const auto& g : geometries) {
      const std::string name = c.name + "_" + to_string(g.geometry);
      SCOPED_TRACE(name);
      const auto& ref = results.at(name);
      const int64_t n = c.x.size(0);
      const auto dx = pairwise_distances(c.x, g), dy = pairwise_distances(c.y, g);
      for (const auto& [ours, file] : {std::pair{dx, "_dx.bin"}, std::pair{dy, "_dy.bin"}}) {
        EXPECT_TRUE(torch::equal(ours, ours.t())) << "not exactly symmetric";
        EXPECT_TRUE(torch::equal(ours.diagonal(), torch::zeros({n}, torch::kDouble))) << "nonzero diagonal";
        const auto reference = read_binary(dir.file(name + file), n);
        const double scale = reference.max().item<double>();
        EXPECT_LE((ours - reference).abs().max().item<double>(), 1e-9 * scale) << file;
      }
      const double scale = std::max(dx.max().item<double>(), dy.max().item<double>());
      const auto hx = rips_h1(dx), hy = rips_h1(dy);  // no symmetry refusal
      expect_same_bars(hx, diagram_of(ref["h1_x"]), 1e-8 * scale);
      expect_same_bars(hy, diagram_of(ref["h1_y"]), 1e-8 * scale);
      expect_close(diagram_distance(hx, hy, 2.0), ref["topo_linf"], 1e-6, 1e-12 * scale, "topo (L-infinity)");
      expect_close(diagram_distance(hx, hy, 2.0, 2.0), ref["topo_l2"], 1e-6, 1e-12 * scale, "topo (L2)");
      expect_close(gromov_wasserstein(dx, dy), ref["gw"], 1e-6, 1e-12 * scale * scale, "gw");
      expect_close(shift(c.x, c.y, g), ref["shift"], 1e-9, 0.0, "shift");
    }
  }
}
