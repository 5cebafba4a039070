// The geometry-guided width allocation: the surrogate optimizer and the budget-exact rounding.
//
// Layer l at width w is given the approximation error e_l(w) = lambda_l * g_l * w^(-a_l), where g_l
// is the layer's (smoothed) geometric work, lambda_l a loss-sensitivity weight and a_l an exponent
// from the layer's intrinsic dimension. Minimising sum_l e_l(w_l) subject to sum_l c w_l = B and
// w_min <= w_l <= w_max (every layer's FFN costs the same c parameters per unit of width, so the
// budget is a sum of widths) gives, by KKT,
//     w_l(mu) = clip((a_l lambda_l g_l / mu)^(1 / (1 + a_l)), w_min, w_max),
// and the multiplier mu is found by bisection so that the widths sum to the budget. More work never
// gets less width when exponents and weights are equal. Schedules pass widths in units of the
// uniform width (budget = number of layers), so the exponents act on relative widths.
#pragma once

#include <cstdint>
#include <vector>

namespace ffnshape::schedule {

struct SurrogateProblem {
  std::vector<double> work;      // g_l >= 0, one per layer
  std::vector<double> exponent;  // a_l > 0
  std::vector<double> lambda;    // lambda_l > 0; empty means all 1
  double budget = 0;             // required sum of the widths
  double w_min = 0;              // bounds on every width
  double w_max = 0;
};

// The continuous KKT widths; they sum to the budget within 1e-9 relative. Throws
// std::invalid_argument when the bounds cannot meet the budget or an input is not usable.
std::vector<double> solve_surrogate(const SurrogateProblem& problem);

// Centred moving average over layers with an odd window; at the ends the window is cut short.
std::vector<double> smooth_profile(const std::vector<double>& values, int64_t window);

// a_l = clip(alpha / d_int_l, lo, hi): fewer intrinsic dimensions means the error falls faster with
// width, so the layer needs less of it to reach the same error.
std::vector<double> exponents_from_dimension(const std::vector<double>& intrinsic_dimension, double alpha,
                                             double lo, double hi);

// Integer widths, each a multiple of `multiple_of` within [lo, hi], summing exactly to `total`
// (itself a multiple of `multiple_of`): floors first, then the remaining units by largest remainder,
// which keeps the order of the continuous widths. Throws when the bounds make the total impossible.
std::vector<int64_t> round_to_budget(const std::vector<double>& widths, int64_t multiple_of, int64_t total,
                                     int64_t lo, int64_t hi);

}  // namespace ffnshape::schedule
