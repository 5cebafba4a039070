// The iso-parameter solver: choose free integer dimensions of a variant config so that its parameter
// count meets a budget, searching the free dimensions jointly.
//
// Among shapes within the tolerance it returns the one closest to the variant's own values
// (smallest sum of squared log-ratios over the free dimensions), so the user's intended shape is kept
// as far as the budget allows. When no shape is within tolerance it returns the closest one and says
// why.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ffnshape/config/model_config.h"
#include "ffnshape/params/count.h"

namespace ffnshape {

enum class BudgetCount { total, non_embedding };

// Names a solver may vary: d_model, n_layers, n_heads, n_kv_heads, head_dim, ffn.hidden, ffn.k.
struct FreeDimension {
  std::string name;
  int64_t min = 1;
  int64_t max = 0;
  int64_t multiple_of = 1;
};

struct IsoProblem {
  ModelConfig variant;
  int64_t budget = 0;
  BudgetCount count = BudgetCount::total;
  std::vector<FreeDimension> free;
  double tolerance = 1e-5;  // relative: 1e-5 is 0.001%
};

struct IsoSolution {
  ModelConfig config;
  int64_t params = 0;  // the counted parameters (total or non-embedding, as asked)
  int64_t budget = 0;
  double rel_error = 0;  // (params - budget) / budget
  bool within_tolerance = false;
  std::map<std::string, int64_t> dimensions;  // the solved value of each free dimension
  int64_t shapes_checked = 0;
  std::string explanation;  // why the tolerance was missed; empty when met
};

// Parses "NAME", "NAME=MIN..MAX", "NAME/MULTIPLE" or "NAME=MIN..MAX/MULTIPLE" ("model." prefix
// optional). The default range is [multiple, 4 x the variant's value]. Throws ConfigError.
FreeDimension parse_free_dimension(const std::string& spec, const ModelConfig& variant);

// Counts what `how` asks for.
int64_t counted_parameters(const ModelConfig& config, BudgetCount how);

// Throws ConfigError for an unsolvable request (unknown dimension, empty range, a search space too
// large to enumerate); an unreachable tolerance is not an error but a solution with an explanation.
IsoSolution solve_iso(const IsoProblem& problem);

const char* to_string(BudgetCount count);

}  // namespace ffnshape
