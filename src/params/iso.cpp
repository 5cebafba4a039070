#include "ffnshape/params/iso.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace ffnshape {
namespace {

constexpr int64_t kMaxOuterShapes = 2'000'000;
constexpr int kValidityScan = 256;  // grid points tried on each side of the budget crossing

const std::vector<std::string>& dimension_names() {
  static const std::vector<std::string> names = {"d_model", "n_layers", "n_heads", "n_kv_heads",
                                                 "head_dim", "ffn.hidden", "ffn.k"};
  return names;
}

int64_t value_of(const ModelConfig& c, const std::string& name) {
  if (name == "d_model") return c.d_model;
  if (name == "n_layers") return c.n_layers;
  if (name == "n_heads") return c.n_heads;
  if (name == "n_kv_heads") return c.kv_heads();
  if (name == "head_dim") return c.attn_head_dim();
  if (name == "ffn.hidden") return c.ffn_uniform_hidden();
  return c.ffn.k;
}

void set_value(ModelConfig& c, const std::string& name, int64_t v) {
  if (name == "d_model") c.d_model = v;
  else if (name == "n_layers") c.n_layers = v;
  else if (name == "n_heads") c.n_heads = v;
  else if (name == "n_kv_heads") c.n_kv_heads = v;
  else if (name == "head_dim") c.head_dim = v;
  else if (name == "ffn.hidden") { c.ffn.hidden = v; c.ffn.ratio.reset(); }
  else c.ffn.k = v;
}

int64_t parse_int(const std::string& text, const std::string& spec) {
  try {
    size_t used = 0;
    const auto value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw ConfigError("--free", "'" + text + "' in '" + spec + "' is not an integer",
                    "write NAME=MIN..MAX/MULTIPLE, e.g. d_model=512..4096/64");
}

// One free dimension's grid: min, min + step, ..., <= max.
struct Grid {
  std::string name;
  int64_t first, step, points;
  int64_t at(int64_t i) const { return first + i * step; }
};

Grid make_grid(const FreeDimension& dim) {
  const int64_t first = ((std::max<int64_t>(dim.min, 1) + dim.multiple_of - 1) / dim.multiple_of) * dim.multiple_of;
  if (first > dim.max) {
    throw ConfigError("--free " + dim.name,
                      "the range " + std::to_string(dim.min) + ".." + std::to_string(dim.max) +
                          " holds no multiple of " + std::to_string(dim.multiple_of),
                      "widen the range or lower the multiple");
  }
  return {dim.name, first, dim.multiple_of, (dim.max - first) / dim.multiple_of + 1};
}

struct Best {
  bool found = false;
  bool within = false;
  double abs_error = std::numeric_limits<double>::infinity();
  double distance = std::numeric_limits<double>::infinity();
  ModelConfig config;
  int64_t params = 0;

  // Within tolerance beats outside; among within, closeness to the variant's shape; else error.
  void offer(const ModelConfig& c, int64_t params_, double abs_err, bool within_, double distance_) {
    const bool better = !found || (within_ && !within) ||
                        (within_ == within && (within_ ? distance_ < distance : abs_err < abs_error));
    if (!better) return;
    found = true;
    within = within_;
    abs_error = abs_err;
    distance = distance_;
    config = c;
    params = params_;
  }
};

}  // namespace

const char* to_string(BudgetCount count) { return count == BudgetCount::total ? "total" : "non_embedding"; }

int64_t counted_parameters(const ModelConfig& config, BudgetCount how) {
  const auto count = count_parameters(config);
  return how == BudgetCount::total ? count.total() : count.non_embedding();
}

FreeDimension parse_free_dimension(const std::string& spec, const ModelConfig& variant) {
  std::string rest = spec;
  if (rest.rfind("model.", 0) == 0) rest = rest.substr(6);
  FreeDimension dim;
  const auto slash = rest.find('/');
  if (slash != std::string::npos) {
    dim.multiple_of = parse_int(rest.substr(slash + 1), spec);
    rest = rest.substr(0, slash);
  }
  const auto eq = rest.find('=');
  dim.name = rest.substr(0, eq);
  bool known = false;
  for (const auto& name : dimension_names()) known = known || name == dim.name;
  if (!known) {
    std::string names;
    for (const auto& name : dimension_names()) names += (names.empty() ? "" : ", ") + name;
    throw ConfigError("--free", "'" + dim.name + "' is not a dimension the solver can vary", "use one of: " + names);
  }
  if (dim.multiple_of < 1) throw ConfigError("--free", "the multiple in '" + spec + "' must be positive", "e.g. /64");
  if (eq != std::string::npos) {
    const auto range = rest.substr(eq + 1);
    const auto dots = range.find("..");
    if (dots == std::string::npos) {
      throw ConfigError("--free", "range '" + range + "' is not MIN..MAX", "e.g. d_model=512..4096");
    }
    dim.min = parse_int(range.substr(0, dots), spec);
    dim.max = parse_int(range.substr(dots + 2), spec);
  } else {
    dim.min = dim.multiple_of;
    dim.max = 4 * std::max<int64_t>(value_of(variant, dim.name), 1);
  }
  if (dim.min > dim.max) throw ConfigError("--free", "range of " + dim.name + " is empty", "write MIN..MAX with MIN <= MAX");
  return dim;
}

IsoSolution solve_iso(const IsoProblem& problem) {
  if (problem.budget <= 0) throw ConfigError("--budget", "must be a positive parameter count", "e.g. --budget 113M");
  if (problem.free.empty()) throw ConfigError("--free", "no free dimension given", "e.g. --free d_model,ffn.hidden");
  for (const auto& dim : problem.free) {
    if (dim.name == "ffn.hidden" && !problem.variant.ffn.widths.empty()) {
      throw ConfigError("model.ffn.widths", "is set, so ffn.hidden cannot be solved for",
                        "remove model.ffn.widths, or free another dimension");
    }
    if (dim.name == "ffn.k" && problem.variant.ffn.kind == FfnKind::conventional) {
      throw ConfigError("model.ffn.kind", "is conventional, which has exactly one sub-block, so ffn.k cannot be free",
                        "set model.ffn.kind: hourglass");
    }
  }
  // The finest grid is searched by bisection (the count grows with every dimension); the others
  // are enumerated.
  std::vector<Grid> grids;
  for (const auto& dim : problem.free) grids.push_back(make_grid(dim));
  size_t inner_index = 0;
  for (size_t i = 1; i < grids.size(); ++i) {
    if (grids[i].points > grids[inner_index].points) inner_index = i;
  }
  const Grid inner = grids[inner_index];
  grids.erase(grids.begin() + static_cast<std::ptrdiff_t>(inner_index));
  int64_t outer_shapes = 1;
  for (const auto& g : grids) {
    outer_shapes *= g.points;
    if (outer_shapes > kMaxOuterShapes) {
      throw ConfigError("--free", "the search space is too large (more than " + std::to_string(kMaxOuterShapes) +
                                      " combinations besides " + inner.name + ")",
                        "narrow the ranges (NAME=MIN..MAX) or coarsen them (NAME/MULTIPLE)");
    }
  }

  std::map<std::string, double> reference;
  for (const auto& dim : problem.free) {
    reference[dim.name] = static_cast<double>(std::max<int64_t>(value_of(problem.variant, dim.name), 1));
  }
  const double budget = static_cast<double>(problem.budget);
  auto distance = [&](const ModelConfig& c) {
    double sum = 0;
    for (const auto& [name, ref] : reference) {
      const double r = std::log(static_cast<double>(value_of(c, name)) / ref);
      sum += r * r;
    }
    return sum;
  };

  Best best;
  int64_t checked = 0;
  ModelConfig shape = problem.variant;
  auto consider = [&](int64_t inner_point) {
    set_value(shape, inner.name, inner.at(inner_point));
    ++checked;
    if (find_problem(shape)) return false;
    const auto params = counted_parameters(shape, problem.count);
    const double abs_err = std::abs(static_cast<double>(params) - budget) / budget;
    best.offer(shape, params, abs_err, abs_err <= problem.tolerance, distance(shape));
    return true;
  };

  // Count with the outer dimensions already set; ignores validity and grows with the inner point.
  auto count_at = [&](int64_t inner_point) {
    set_value(shape, inner.name, inner.at(inner_point));
    return static_cast<double>(counted_parameters(shape, problem.count));
  };
  // First inner point whose count exceeds `limit` (inner.points if none).
  auto first_above = [&](double limit) {
    int64_t lo = -1, hi = inner.points;
    while (hi - lo > 1) {
      const int64_t mid = lo + (hi - lo) / 2;
      (count_at(mid) <= limit ? lo : hi) = mid;
    }
    return hi;
  };
  // Consider the nearest valid shapes on each side of `from` within [lo, hi] (validity, e.g.
  // divisibility by n_heads, is not monotone, so it is scanned for).
  auto consider_near = [&](int64_t from, int64_t lo, int64_t hi) {
    for (int64_t i = from, n = 0; i >= lo && n < kValidityScan; --i, ++n) {
      if (consider(i)) break;
    }
    for (int64_t i = from + 1, n = 0; i <= hi && n < kValidityScan; ++i, ++n) {
      if (consider(i)) break;
    }
  };
  const double inner_reference = reference.at(inner.name);

  std::vector<int64_t> outer_index(grids.size(), 0);
  for (int64_t n = 0; n < outer_shapes; ++n) {
    for (size_t i = 0; i < grids.size(); ++i) set_value(shape, grids[i].name, grids[i].at(outer_index[i]));
    // The closest counts: the last point at or below the budget and the one after it.
    const int64_t crossing = first_above(budget) - 1;
    consider_near(crossing, 0, inner.points - 1);
    // Within the tolerance window (counts are integers), the point nearest the variant's own value.
    const int64_t window_lo = first_above(std::ceil(budget * (1 - problem.tolerance)) - 1);
    const int64_t window_hi = first_above(budget * (1 + problem.tolerance)) - 1;
    if (window_lo <= window_hi) {
      const auto nearest = static_cast<int64_t>(std::llround((inner_reference - inner.first) / inner.step));
      consider_near(std::clamp(nearest, window_lo, window_hi), window_lo, window_hi);
    }
    for (size_t i = 0; i < grids.size(); ++i) {  // next outer combination
      if (++outer_index[i] < grids[i].points) break;
      outer_index[i] = 0;
    }
  }

  if (!best.found) {
    throw ConfigError("--free", "no valid configuration exists in the given ranges",
                      "widen the ranges; check divisibility (d_model by n_heads, n_heads by n_kv_heads)");
  }
  IsoSolution solution;
  solution.config = best.config;
  solution.params = best.params;
  solution.budget = problem.budget;
  solution.rel_error = (static_cast<double>(best.params) - budget) / budget;
  solution.within_tolerance = best.within;
  solution.shapes_checked = checked;
  for (const auto& dim : problem.free) solution.dimensions[dim.name] = value_of(best.config, dim.name);
  if (!best.within) {
    // How coarse the count is around the answer: one grid step of the inner dimension.
    ModelConfig stepped = best.config;
    set_value(stepped, inner.name, value_of(best.config, inner.name) + inner.step);
    const auto step = counted_parameters(stepped, problem.count) - best.params;
    std::ostringstream why;
    why << "no shape in the ranges is within " << problem.tolerance * 100 << "% of the budget; one step of "
        << inner.name << " (" << inner.step << ") changes the count by " << step << " parameters ("
        << 100.0 * static_cast<double>(step) / budget
        << "% of the budget). Free another dimension, widen the ranges, or lower the multiples.";
    solution.explanation = why.str();
  }
  return solution;
}

}  // namespace ffnshape
