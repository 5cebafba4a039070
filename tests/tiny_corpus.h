// A tiny "language" for trainer and profiler tests: each token determines the next few, so a model
// can learn it in a few steps.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace ffnshape::testing {

inline std::vector<uint32_t> patterned_tokens(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint32_t> out;
  while (out.size() < n) {
    const uint32_t a = gen() % 40;
    for (uint32_t t : {a, (a * 7) % 61, (a * 13) % 61, 61 + a % 3}) out.push_back(t);
  }
  out.resize(n);
  return out;
}

}  // namespace ffnshape::testing
