// Point-cloud geometry: distances under the three geometries of the geometric-work measurements,
// shift between corresponding clouds, and the TwoNN intrinsic dimension. Tensors in, numbers out:
// this area knows nothing of models.
//
//   raw         Euclidean distance of the states as they are (scale-sensitive)
//   spherical   states normalised to unit length, angular distance arccos(<u, v>)
//   hyperbolic  unit-normalised states placed at radius r in the Poincare ball (curvature -1):
//               d = arcosh(1 + 2 |u - v|^2 / (1 - r^2)^2), |u - v| the chord between the scaled points;
//               a monotone, nonlinear re-weighting of the angular distance. r is not published:
//               the default 0.8 is this project's choice.
//
// Every distance is computed from differences of the points, in forms accurate at all scales: raw
// |x - y|; spherical 2 atan2(|u - v|, |u + v|) (arccos of a dot product loses half the digits near 0
// and pi); hyperbolic 2 asinh(r |u - v| / (1 - r^2)), the arcosh above without its cancellation near 0.
// So repeated points are exactly 0 apart, a cloud far from the origin keeps its digits, and a pairwise
// matrix is exactly symmetric with an exact zero diagonal (what persistence and Gromov-Wasserstein check).
//
// Clouds are (N, D) tensors of any floating dtype; computation is in float64. Bad input (not 2-D,
// too few points, non-finite or zero-length states where normalisation needs a direction) throws
// std::invalid_argument saying what is wrong.
#pragma once

#include <torch/torch.h>

#include <string>

namespace ffnshape::geometry {

enum class Geometry { raw, spherical, hyperbolic };

struct GeometryOptions {
  Geometry geometry = Geometry::raw;
  double radius = 0.8;  // hyperbolic only, 0 < radius < 1
};

Geometry parse_geometry(const std::string& name);  // raw | spherical | hyperbolic
const char* to_string(Geometry geometry);

// (N, N) float64 matrix of distances between the points of one cloud.
torch::Tensor pairwise_distances(const torch::Tensor& cloud, const GeometryOptions& options = {});

// (N) float64 distances between corresponding points of two clouds of the same shape.
torch::Tensor paired_distances(const torch::Tensor& x, const torch::Tensor& y, const GeometryOptions& options = {});

// Shift: the mean distance between corresponding points (correspondence kept).
double shift(const torch::Tensor& x, const torch::Tensor& y, const GeometryOptions& options = {});

// TwoNN intrinsic dimension (Facco et al. 2017) from a pairwise distance matrix: the maximum
// likelihood estimate N / sum_i log(r2_i / r1_i) over the ratios of each point's second to first
// nearest-neighbour distance. Coincident points count once; needs at least 3 distinct points.
double twonn_dimension(const torch::Tensor& distances);

}  // namespace ffnshape::geometry
