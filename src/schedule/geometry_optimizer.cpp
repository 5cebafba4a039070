#include "ffnshape/schedule/geometry_optimizer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ffnshape::schedule {
namespace {

std::vector<double> widths_at(const SurrogateProblem& p, double log_mu) {
  std::vector<double> w(p.work.size());
  for (size_t l = 0; l < w.size(); ++l) {
    const double lambda = p.lambda.empty() ? 1.0 : p.lambda[l];
    const double a = p.exponent[l];
    double value = p.w_min;
    if (p.work[l] > 0) {
      // (a lambda g / mu)^(1/(1+a)) in log space: the work can span many orders of magnitude.
      value = std::exp((std::log(a * lambda * p.work[l]) - log_mu) / (1.0 + a));
    }
    w[l] = std::clamp(value, p.w_min, p.w_max);
  }
  return w;
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

}  // namespace

std::vector<double> solve_surrogate(const SurrogateProblem& p) {
  const size_t n = p.work.size();
  if (n == 0) throw std::invalid_argument("the work profile is empty");
  if (p.exponent.size() != n || (!p.lambda.empty() && p.lambda.size() != n)) {
    throw std::invalid_argument("work, exponents and weights must have one entry per layer");
  }
  for (size_t l = 0; l < n; ++l) {
    if (!std::isfinite(p.work[l]) || p.work[l] < 0) {
      throw std::invalid_argument("the work of layer " + std::to_string(l) + " is " + std::to_string(p.work[l]) +
                                  "; it must be finite and non-negative");
    }
    if (!(p.exponent[l] > 0) || !std::isfinite(p.exponent[l])) {
      throw std::invalid_argument("the exponent of layer " + std::to_string(l) + " must be positive and finite");
    }
  }
  if (!(p.w_min > 0) || !(p.w_max >= p.w_min)) throw std::invalid_argument("the width bounds need 0 < w_min <= w_max");
  const double lo_sum = p.w_min * static_cast<double>(n);
  const double hi_sum = p.w_max * static_cast<double>(n);
  if (p.budget < lo_sum * (1 - 1e-12) || p.budget > hi_sum * (1 + 1e-12)) {
    throw std::invalid_argument("a budget of " + std::to_string(p.budget) + " cannot be met with every width in [" +
                                std::to_string(p.w_min) + ", " + std::to_string(p.w_max) + "]");
  }
  if (std::all_of(p.work.begin(), p.work.end(), [](double g) { return g == 0; })) {
    return std::vector<double>(n, p.budget / static_cast<double>(n));  // no work anywhere: nothing to prefer
  }
  // The width sum falls monotonically as log(mu) grows: bracket the budget, then bisect.
  double lo = -1.0, hi = 1.0;
  while (sum(widths_at(p, lo)) < p.budget && lo > -1e4) lo *= 2;
  while (sum(widths_at(p, hi)) > p.budget && hi < 1e4) hi *= 2;
  for (int it = 0; it < 200 && hi - lo > 1e-13; ++it) {
    const double mid = 0.5 * (lo + hi);
    (sum(widths_at(p, mid)) > p.budget ? lo : hi) = mid;
  }
  auto w = widths_at(p, 0.5 * (lo + hi));
  // Bisection leaves a tiny residue; spread it over the layers that are not at a bound.
  const double residue = p.budget - sum(w);
  std::vector<size_t> free;
  for (size_t l = 0; l < n; ++l) {
    if (w[l] > p.w_min && w[l] < p.w_max) free.push_back(l);
  }
  for (size_t l : free) w[l] += residue / static_cast<double>(free.size());
  return w;
}

std::vector<double> smooth_profile(const std::vector<double>& values, int64_t window) {
  if (window < 1 || window % 2 == 0) throw std::invalid_argument("the smoothing window must be odd and at least 1");
  const auto n = static_cast<int64_t>(values.size());
  const int64_t half = window / 2;
  std::vector<double> out(values.size());
  for (int64_t l = 0; l < n; ++l) {
    const int64_t a = std::max<int64_t>(0, l - half), b = std::min<int64_t>(n - 1, l + half);
    double total = 0;
    for (int64_t j = a; j <= b; ++j) total += values[static_cast<size_t>(j)];
    out[static_cast<size_t>(l)] = total / static_cast<double>(b - a + 1);
  }
  return out;
}

std::vector<double> exponents_from_dimension(const std::vector<double>& d_int, double alpha, double lo, double hi) {
  std::vector<double> a(d_int.size());
  for (size_t l = 0; l < d_int.size(); ++l) {
    if (!(d_int[l] > 0) || !std::isfinite(d_int[l])) {
      throw std::invalid_argument("the intrinsic dimension of layer " + std::to_string(l) + " is " +
                                  std::to_string(d_int[l]) + "; it must be positive and finite");
    }
    a[l] = std::clamp(alpha / d_int[l], lo, hi);
  }
  return a;
}

std::vector<int64_t> round_to_budget(const std::vector<double>& widths, int64_t m, int64_t total, int64_t lo,
                                     int64_t hi) {
  const auto n = static_cast<int64_t>(widths.size());
  if (m < 1 || total % m != 0) throw std::invalid_argument("the total width must be a multiple of multiple_of");
  // Work in units of multiple_of.
  const int64_t lo_u = std::max<int64_t>(1, (lo + m - 1) / m);
  const int64_t hi_u = hi / m;
  const int64_t target = total / m;
  if (lo_u > hi_u || lo_u * n > target || hi_u * n < target) {
    throw std::invalid_argument("no widths that are multiples of " + std::to_string(m) + " within [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "] sum to " + std::to_string(total));
  }
  std::vector<int64_t> units(widths.size());
  std::vector<double> remainder(widths.size());
  int64_t assigned = 0;
  for (size_t l = 0; l < widths.size(); ++l) {
    const double u = widths[l] / static_cast<double>(m);
    units[l] = std::clamp(static_cast<int64_t>(std::floor(u)), lo_u, hi_u);
    remainder[l] = u - static_cast<double>(units[l]);
    assigned += units[l];
  }
  std::vector<size_t> order(widths.size());
  std::iota(order.begin(), order.end(), 0);
  // Ties go to the deeper index last; stable order keeps the result deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return remainder[a] > remainder[b]; });
  while (assigned < target) {  // hand out missing units, largest remainder first
    bool moved = false;
    for (size_t l : order) {
      if (assigned == target) break;
      if (units[l] < hi_u) { ++units[l]; remainder[l] -= 1; ++assigned; moved = true; }
    }
    if (!moved) break;
  }
  while (assigned > target) {  // take back surplus units (only after clamping up), smallest remainder first
    bool moved = false;
    for (auto it = order.rbegin(); it != order.rend() && assigned > target; ++it) {
      if (units[*it] > lo_u) { --units[*it]; remainder[*it] += 1; --assigned; moved = true; }
    }
    if (!moved) break;
  }
  std::vector<int64_t> out(widths.size());
  for (size_t l = 0; l < widths.size(); ++l) out[l] = units[l] * m;
  return out;
}

}  // namespace ffnshape::schedule
