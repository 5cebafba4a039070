// Point-cloud geometry against hand-computed values: distances under the three geometries, shift, and
// TwoNN on manifolds of known dimension.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "ffnshape/geometry/metrics.h"

using namespace ffnshape::geometry;

namespace {

// Unit vectors in the plane at the given angles (radians), embedded in 3-D and scaled.
torch::Tensor at_angles(const std::vector<double>& angles, double scale = 1.0) {
  auto x = torch::zeros({static_cast<int64_t>(angles.size()), 3}, torch::kDouble);
  for (size_t i = 0; i < angles.size(); ++i) {
    x[i][0] = scale * std::cos(angles[i]);
    x[i][1] = scale * std::sin(angles[i]);
  }
  return x;
}

}  // namespace

TEST(Geometry, RawIsEuclidean) {
  const auto x = torch::tensor({0.0, 0.0, 3.0, 4.0, 6.0, 8.0}, torch::kDouble).view({3, 2});
  const auto d = pairwise_distances(x);
  EXPECT_DOUBLE_EQ(d[0][1].item<double>(), 5.0);
  EXPECT_DOUBLE_EQ(d[0][2].item<double>(), 10.0);
  EXPECT_NEAR(d[1][2].item<double>(), 5.0, 1e-12);
  EXPECT_TRUE(torch::equal(d.diagonal(), torch::zeros({3}, torch::kDouble)));
  torch::manual_seed(0);
  const auto cloud = torch::randn({40, 7});
  const auto x64 = cloud.to(torch::kDouble);
  const auto expected = (x64.unsqueeze(1) - x64.unsqueeze(0)).norm(2, -1);  // every difference written out
  EXPECT_TRUE(torch::allclose(pairwise_distances(cloud), expected, 1e-9, 1e-9));
}

TEST(Geometry, SphericalIsTheAngleAndIgnoresScale) {
  const auto x = at_angles({0.0, M_PI / 2, M_PI, M_PI / 3}, 7.0);
  const auto d = pairwise_distances(x, {Geometry::spherical});
  EXPECT_NEAR(d[0][1].item<double>(), M_PI / 2, 1e-12);
  EXPECT_NEAR(d[0][2].item<double>(), M_PI, 1e-15);
  EXPECT_NEAR(d[0][3].item<double>(), M_PI / 3, 1e-12);
  EXPECT_NEAR(d[1][3].item<double>(), M_PI / 6, 1e-12);
  EXPECT_TRUE(torch::allclose(d, pairwise_distances(at_angles({0.0, M_PI / 2, M_PI, M_PI / 3}, 0.01),
                                                    {Geometry::spherical})));
}

TEST(Geometry, HyperbolicFollowsThePoincareFormula) {
  const double r = 0.8;
  for (double theta : {0.1, 0.7, 1.5, 3.0}) {
    const auto x = at_angles({0.0, theta}, 5.0);
    // Points r e_0 and r (cos t, sin t): |u - v|^2 = 2 r^2 (1 - cos t).
    const double chord2 = 2 * r * r * (1 - std::cos(theta));
    const double expected = std::acosh(1 + 2 * chord2 / ((1 - r * r) * (1 - r * r)));
    EXPECT_NEAR(pairwise_distances(x, {Geometry::hyperbolic, r})[0][1].item<double>(), expected, 1e-9);
    EXPECT_NEAR(paired_distances(x.narrow(0, 0, 1), x.narrow(0, 1, 1), {Geometry::hyperbolic, r}).item<double>(),
                expected, 1e-9);
  }
  // A monotone re-weighting of the angle: orders of pairs agree with the spherical ones.
  const auto x = at_angles({0.0, 0.2, 0.9, 2.05, 3.1});  // all pairwise angles distinct
  const auto upper = torch::triu_indices(5, 5, 1);
  auto pairs = [&](const torch::Tensor& d) { return d.index({upper[0], upper[1]}); };
  const auto sph = pairs(pairwise_distances(x, {Geometry::spherical}));
  const auto hyp = pairs(pairwise_distances(x, {Geometry::hyperbolic, 0.5}));
  EXPECT_TRUE(torch::equal(sph.argsort(), hyp.argsort()));
}

TEST(Geometry, TinyAndNearlyAntipodalAnglesKeepTheirDigits) {
  // (1, 0) against (cos t, sin t): cos t rounds to 1 (or -1) for t = 1e-9, so a dot product says 0 (or pi);
  // the angle between the stored vectors is t (pi - t) to within 1e-24.
  for (double t : {1e-9, 1e-6, 1e-3}) {
    const auto x = at_angles({0.0, t, M_PI - t}, 3.0);
    const auto d = pairwise_distances(x, {Geometry::spherical});
    EXPECT_NEAR(d[0][1].item<double>(), t, 1e-15 * t) << t;
    EXPECT_NEAR(d[0][2].item<double>(), M_PI - t, 1e-15) << t;
    EXPECT_NEAR(paired_distances(x.narrow(0, 0, 1), x.narrow(0, 1, 1), {Geometry::spherical}).item<double>(), t, 1e-15 * t);
    // Hyperbolic at radius r: chord 2 sin(t / 2), d = 2 asinh(r chord / (1 - r^2)) ~ 2 r t / (1 - r^2).
    const double r = 0.8, expected = 2 * std::asinh(r * 2 * std::sin(t / 2) / (1 - r * r));
    EXPECT_NEAR(pairwise_distances(x, {Geometry::hyperbolic, r})[0][1].item<double>(), expected, 1e-15 * expected) << t;
  }
}

TEST(Geometry, MatricesAreExactlySymmetricWithAZeroDiagonal) {
  // Repeated points and a cloud 1e6 times its spread from the origin: copies exactly 0 apart, every
  // matrix equal to its transpose bit for bit, and raw distances as from the differences.
  torch::manual_seed(4);
  const auto base = torch::randn({40, 6}, torch::kDouble);
  const auto cloud = torch::cat({base, base.slice(0, 0, 20)}) + 1e6 * torch::ones({1, 6}, torch::kDouble);
  for (auto g : {Geometry::raw, Geometry::spherical, Geometry::hyperbolic}) {
    const auto d = pairwise_distances(cloud, {g});
    EXPECT_TRUE(torch::equal(d, d.t())) << to_string(g);
    EXPECT_TRUE(torch::equal(d.diagonal(), torch::zeros({60}, torch::kDouble))) << to_string(g);
    EXPECT_EQ(d[3][43].item<double>(), 0.0) << to_string(g);  // point 43 is a copy of point 3
  }
  const auto raw = pairwise_distances(cloud);
  const auto centred = base.unsqueeze(1) - base.unsqueeze(0);
  EXPECT_TRUE(torch::allclose(raw.slice(0, 0, 40).slice(1, 0, 40), centred.norm(2, -1), 1e-9, 0.0));
}

TEST(Geometry, ShiftOfKnownDisplacements) {
  torch::manual_seed(1);
  const auto x = torch::randn({50, 4}, torch::kDouble);
  const auto c = torch::tensor({1.0, -2.0, 2.0, 0.0}, torch::kDouble);
  EXPECT_NEAR(shift(x, x + c), 3.0, 1e-12);                       // |c| = 3 for every point
  EXPECT_NEAR(shift(x, 5.0 * x, {Geometry::spherical}), 0.0, 1e-7);  // scaling moves no direction
  EXPECT_NEAR(shift(x, -x, {Geometry::spherical}), M_PI, 1e-6);
  EXPECT_NEAR(shift(x, x, {Geometry::hyperbolic}), 0.0, 1e-6);
}

TEST(Geometry, TwoNNFindsTheDimensionOfASheetIn10D) {
  torch::manual_seed(2);
  // A flat 2-D sheet embedded in 10-D by a random orthonormal map.
  const auto sheet = torch::rand({2000, 2}, torch::kDouble);
  const auto basis = std::get<0>(torch::linalg_qr(torch::randn({10, 10}, torch::kDouble))).narrow(1, 0, 2);
  const auto cloud = torch::mm(sheet, basis.t());
  EXPECT_NEAR(twonn_dimension(pairwise_distances(cloud)), 2.0, 0.25);
  const auto gaussian5 = torch::mm(torch::randn({2000, 5}, torch::kDouble), torch::randn({5, 10}, torch::kDouble));
  EXPECT_NEAR(twonn_dimension(pairwise_distances(gaussian5)), 5.0, 0.8);
}

TEST(Geometry, RejectsBadClouds) {
  auto x = torch::randn({5, 3});
  x[2][1] = std::nan("");
  EXPECT_THROW(pairwise_distances(x), std::invalid_argument);
  EXPECT_THROW(pairwise_distances(torch::randn({5})), std::invalid_argument);
  EXPECT_THROW(twonn_dimension(pairwise_distances(torch::randn({2, 3}))), std::invalid_argument);
  EXPECT_THROW(pairwise_distances(torch::zeros({3, 2}), {Geometry::spherical}), std::invalid_argument);
  EXPECT_THROW(paired_distances(torch::randn({3, 2}), torch::randn({4, 2})), std::invalid_argument);
  EXPECT_THROW(pairwise_distances(torch::randn({3, 2}), {Geometry::hyperbolic, 1.0}), std::invalid_argument);
  EXPECT_THROW(parse_geometry("euclid"), std::invalid_argument);
  const auto copies = torch::cat({torch::randn({1, 2}), torch::randn({1, 2}).expand({3, 2})});
  EXPECT_THROW(twonn_dimension(pairwise_distances(copies)), std::invalid_argument);  // 2 distinct points
}

TEST(Geometry, TwoNNCountsCoincidentPointsOnce) {
  torch::manual_seed(3);
  const auto cloud = torch::randn({200, 4}, torch::kDouble);
  const auto with_copies = torch::cat({cloud, cloud.slice(0, 0, 50), cloud.slice(0, 10, 20)});
  // Equal up to rounding: the copies move the cloud's mean, which the distances are computed about.
  EXPECT_NEAR(twonn_dimension(pairwise_distances(with_copies)), twonn_dimension(pairwise_distances(cloud)), 1e-12);
}
