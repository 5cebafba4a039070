// Wasserstein distance between persistence diagrams through Hera (header-only; its Wasserstein part needs
// Boost headers, and TBB only when built with -DTBB, which we do not). Hera's auction returns a value
// within a guaranteed relative error `delta` of the optimum; it treats points at +infinity death itself,
// matching them by birth in one dimension (the convention GUDHI follows too).
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <wasserstein.h>  // Hera; its directory is on this file's include path (see CMakeLists.txt)

#include "ffnshape/geometry/persistence.h"

namespace ffnshape::geometry {
namespace {

// Relative error of the auction. The tests hold the result to 1e-6 of an exact optimal-transport solver;
// 1e-10 leaves a wide margin and costs only a few more auction phases.
constexpr double kRelativeError = 1e-10;

std::vector<std::pair<double, double>> checked_points(const PersistenceDiagram& diagram, const char* which) {
  std::vector<std::pair<double, double>> points;
  points.reserve(diagram.size());
  for (size_t k = 0; k < diagram.size(); ++k) {
    const auto& p = diagram[k];
    if (!std::isfinite(p.birth) || std::isnan(p.death)) {
      throw std::invalid_argument(std::string("the ") + which + " diagram's point " + std::to_string(k) + " (" +
                                  std::to_string(p.birth) + ", " + std::to_string(p.death) +
                                  ") is not valid: births must be finite and deaths not NaN");
    }
    if (p.death < p.birth) {
      throw std::invalid_argument(std::string("the ") + which + " diagram's point " + std::to_string(k) + " (" +
                                  std::to_string(p.birth) + ", " + std::to_string(p.death) + ") dies before it is born");
    }
    points.emplace_back(p.birth, p.death);
  }
  return points;
}

}  // namespace

double diagram_distance(const PersistenceDiagram& a, const PersistenceDiagram& b, double q, double internal_p) {
  if (!(q >= 1) || !std::isfinite(q)) {
    throw std::invalid_argument("the Wasserstein order q must be a finite number >= 1, but is " + std::to_string(q));
  }
  if (!(internal_p >= 1)) {
    throw std::invalid_argument("the internal norm p of the diagram distance must be >= 1 (or infinity), but is " +
                                std::to_string(internal_p));
  }
  const auto points_a = checked_points(a, "first");
  const auto points_b = checked_points(b, "second");
  hera::AuctionParams<double> params;
  params.wasserstein_power = q;
  params.internal_p = std::isinf(internal_p) ? hera::get_infinity<double>() : internal_p;
  params.delta = kRelativeError;
  return hera::wasserstein_dist(points_a, points_b, params);
}

}  // namespace ffnshape::geometry
