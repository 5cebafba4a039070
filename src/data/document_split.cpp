#include "document_split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "ffnshape/train/data_error.h"

namespace ffnshape::data {

std::vector<bool> validation_documents(uint64_t n, double fraction, uint64_t seed) {
  if (n > std::numeric_limits<uint32_t>::max()) {
    throw DataError(std::to_string(n) + " documents: more than the 2^32 this split supports\n"
                    "  fix: prepare the corpus in parts");
  }
  auto n_val = static_cast<uint64_t>(std::llround(fraction * static_cast<double>(n)));
  if (fraction > 0 && n_val == 0 && n > 1) n_val = 1;
  if (n_val >= n) {
    throw DataError("only " + std::to_string(n) + " document(s): nothing would be left to train on\n"
                    "  fix: lower --val-fraction or add documents");
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 generator(seed);
  std::shuffle(order.begin(), order.end(), generator);
  std::vector<bool> is_val(n, false);
  for (uint64_t i = 0; i < n_val; ++i) is_val[order[i]] = true;
  return is_val;
}

}  // namespace ffnshape::data
