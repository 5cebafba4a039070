#include "ffnshape/geometry/metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ffnshape::geometry {
namespace {

torch::Tensor checked_cloud(const torch::Tensor& cloud, const char* what, int64_t min_points) {
  if (cloud.dim() != 2) {
    throw std::invalid_argument(std::string(what) + " must be a 2-D (points x dimensions) tensor, but has " +
                                std::to_string(cloud.dim()) + " dimensions");
  }
  if (cloud.size(0) < min_points) {
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(cloud.size(0)) + " points; at least " +
                                std::to_string(min_points) + " are needed");
  }
  auto x = cloud.to(torch::kCPU, torch::kDouble);
  if (!torch::isfinite(x).all().item<bool>()) {
    throw std::invalid_argument(std::string(what) + " contains NaN or infinite values");
  }
  return x;
}

torch::Tensor unit_rows(const torch::Tensor& x, const char* what) {
  const auto norms = x.norm(2, 1, /*keepdim=*/true);
  if ((norms == 0).any().item<bool>()) {
    throw std::invalid_argument(std::string(what) + " has a zero vector, which has no direction to normalise");
  }
  return x / norms;
}

// A matrix exactly symmetric with an exact zero diagonal: the upper triangle mirrored.
torch::Tensor mirrored(const torch::Tensor& d) {
  const auto upper = torch::triu(d, 1);
  return upper + upper.t();
}

// Below this fraction of |a|^2 + |b|^2, a squared distance from the Gram form has lost too many digits
// to cancellation (its rounding is about 1e-16 of that sum): such pairs are recomputed from differences.
constexpr double kGramResolution = 1e-6;

// Squared chords |a_i + sign a_j|^2 (sign -1: distances, +1: chords to the antipode) between the rows
// of a, given gram = a a^T: the Gram form, with the pairs it cannot resolve (nearly equal or nearly
// antipodal rows) recomputed from differences, so copies are exactly 0 apart. Exactly symmetric with a
// zero diagonal: the upper triangle mirrored. One matrix product does the bulk; differences of every
// pair (torch::cdist without products) cost 7-37x more on 512-point clouds of 768 to 4096 dimensions.
torch::Tensor squared_chords(const torch::Tensor& a, const torch::Tensor& gram, double sign) {
  const auto norms2 = gram.diagonal();
  const auto scale = norms2.unsqueeze(1) + norms2.unsqueeze(0);
  auto d2 = scale + (2.0 * sign) * gram;
  const auto unsure = torch::triu(d2 < kGramResolution * scale, 1).nonzero();
  // Chunks bound the gathered rows to about 32 MB even when most pairs are unsure.
  const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 22) / std::max<int64_t>(1, a.size(1)));
  for (int64_t begin = 0; begin < unsure.size(0); begin += chunk) {
    const auto pairs = unsure.slice(0, begin, begin + chunk);
    const auto i = pairs.select(1, 0), j = pairs.select(1, 1);
    d2.index_put_({i, j}, (a.index_select(0, i) + sign * a.index_select(0, j)).pow(2).sum(1));
  }
  return mirrored(d2.clamp_min(0.0));
}

// Pairwise Euclidean distances of a cloud. Centring first keeps the digits of a cloud far from the
// origin: x_i - mean is exact there (Sterbenz), so differences of centred points are those of the
// originals.
torch::Tensor euclidean_distances(const torch::Tensor& x) {
  const auto centred = x - x.mean(0, /*keepdim=*/true);
  return squared_chords(centred, torch::mm(centred, centred.t()), -1.0).sqrt();
}

// The angle between unit vectors from the chords |u - v| and |u + v| (Kahan): accurate at every angle,
// where arccos(<u, v>) loses half the digits near 0 and pi.
torch::Tensor angle_from_chords(const torch::Tensor& minus, const torch::Tensor& plus) {
  return 2.0 * torch::atan2(minus, plus);
}

// Poincare-ball distance of points at radius r from the chord c = |u - v| between their directions:
// arcosh(1 + 2 r^2 c^2 / (1 - r^2)^2) = 2 asinh(r c / (1 - r^2)), the form without cancellation near 0.
torch::Tensor hyperbolic_from_chord(const torch::Tensor& unit_chord, double r) {
  if (!(r > 0 && r < 1)) throw std::invalid_argument("the hyperbolic radius must be in (0, 1), but is " + std::to_string(r));
  return 2.0 * torch::asinh(unit_chord * (r / (1.0 - r * r)));
}

}  // namespace

Geometry parse_geometry(const std::string& name) {
  if (name == "raw") return Geometry::raw;
  if (name == "spherical") return Geometry::spherical;
  if (name == "hyperbolic") return Geometry::hyperbolic;
  throw std::invalid_argument("unknown geometry '" + name + "': use raw, spherical or hyperbolic");
}

const char* to_string(Geometry g) {
  return g == Geometry::raw ? "raw" : g == Geometry::spherical ? "spherical" : "hyperbolic";
}

torch::Tensor pairwise_distances(const torch::Tensor& cloud, const GeometryOptions& options) {
  const auto x = checked_cloud(cloud, "the cloud", 1);
  if (options.geometry == Geometry::raw) return euclidean_distances(x);
  const auto u = unit_rows(x, "the cloud");
  const auto cosines = torch::mm(u, u.t());
  const auto minus = squared_chords(u, cosines, -1.0).sqrt();
  // Mirrored again: vectorised and scalar atan2 / asinh may differ in the last bit.
  if (options.geometry == Geometry::hyperbolic) return mirrored(hyperbolic_from_chord(minus, options.radius));
  return mirrored(angle_from_chords(minus, squared_chords(u, cosines, +1.0).sqrt()));
}

torch::Tensor paired_distances(const torch::Tensor& x_in, const torch::Tensor& y_in, const GeometryOptions& options) {
  const auto x = checked_cloud(x_in, "the first cloud", 1);
  const auto y = checked_cloud(y_in, "the second cloud", 1);
  if (x.sizes() != y.sizes()) {
    throw std::invalid_argument("paired clouds must have the same shape: " + std::to_string(x.size(0)) + "x" +
                                std::to_string(x.size(1)) + " vs " + std::to_string(y.size(0)) + "x" +
                                std::to_string(y.size(1)));
  }
  if (options.geometry == Geometry::raw) return (x - y).norm(2, 1);
  const auto u = unit_rows(x, "the first cloud"), v = unit_rows(y, "the second cloud");
  const auto minus = (u - v).norm(2, 1);
  if (options.geometry == Geometry::hyperbolic) return hyperbolic_from_chord(minus, options.radius);
  return angle_from_chords(minus, (u + v).norm(2, 1));
}

double shift(const torch::Tensor& x, const torch::Tensor& y, const GeometryOptions& options) {
  return paired_distances(x, y, options).mean().item<double>();
}

double twonn_dimension(const torch::Tensor& distances) {
  if (distances.dim() != 2 || distances.size(0) != distances.size(1)) {
    throw std::invalid_argument("TwoNN needs a square distance matrix");
  }
  const int64_t n = distances.size(0);
  if (n < 3) throw std::invalid_argument("TwoNN needs at least 3 points, but has " + std::to_string(n));
  auto d = distances.to(torch::kCPU, torch::kDouble);
  // Coincident points (repeated tokens give repeated states) count once, as Facco et al. advise:
  // a copy has no nearest-neighbour distance to measure. pairwise_distances puts copies exactly 0
  // apart; a matrix made otherwise may not, so "coincident" means within 1e-7 of the cloud's diameter.
  const double tiny = 1e-7 * d.max().item<double>();
  const auto copy_of_earlier = torch::tril(d <= tiny, -1).any(1);
  if (copy_of_earlier.any().item<bool>()) {
    const auto keep = torch::nonzero(copy_of_earlier.logical_not()).squeeze(1);
    d = d.index_select(0, keep).index_select(1, keep);
  }
  if (d.size(0) < 3) {
    throw std::invalid_argument("TwoNN needs at least 3 distinct points, but the cloud has " +
                                std::to_string(d.size(0)));
  }
  d = d.clone();
  d.fill_diagonal_(std::numeric_limits<double>::infinity());
  const auto nearest = std::get<0>(d.topk(2, 1, /*largest=*/false, /*sorted=*/true));
  const auto r1 = nearest.select(1, 0), r2 = nearest.select(1, 1);
  const double sum_log = torch::log(r2 / r1).sum().item<double>();
  if (!(sum_log > 0)) throw std::invalid_argument("TwoNN is undefined: every point has equidistant nearest neighbours");
  return static_cast<double>(d.size(0)) / sum_log;
}

}  // namespace ffnshape::geometry
