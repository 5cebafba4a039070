// Internal: which documents are held out for validation, by ordinal.
#pragma once

#include <cstdint>
#include <vector>

namespace ffnshape::data {

// Documents 0..n-1 shuffled with std::mt19937_64(seed); the first round(fraction * n) (at least one
// when fraction > 0 and n > 1) are validation. This is the permutation std::shuffle gives any vector
// of n elements with that generator, so it equals the split of n sorted text files. The index vector
// (4 bytes per document) lives only during the call; the result is a bitset. DataError when nothing
// would be left to train on.
std::vector<bool> validation_documents(uint64_t n, double fraction, uint64_t seed);

}  // namespace ffnshape::data
