#include "cpu_blas.h"

#include <dlfcn.h>

#include <cstring>

namespace ffnshape::nn {
namespace {

// Sizes are passed as pointers to int64_t holding small values: a 32-bit-integer BLAS reads their low
// half on these little-endian machines, a 64-bit-integer one the whole. The check product,
// [[1,2],[3,4]] x [[1,0,2],[0,1,3]], is exact in both precisions.
template <typename T>
Gemm<T> checked(const char* symbol, T (*from_float)(float)) {
  Gemm<T> g{reinterpret_cast<typename Gemm<T>::Fn>(dlsym(RTLD_DEFAULT, symbol))};
  if (!g) return {};
  const float a_values[4] = {1, 2, 3, 4}, b_values[6] = {1, 0, 2, 0, 1, 3};
  T a[4], b[6];
  for (int i = 0; i < 4; ++i) a[i] = from_float(a_values[i]);
  for (int i = 0; i < 6; ++i) b[i] = from_float(b_values[i]);
  float c[6] = {};
  g(false, false, 2, 3, 2, a, 2, b, 3, 0.0f, c, 3);
  const float expected[6] = {1, 2, 8, 3, 4, 18};
  for (int i = 0; i < 6; ++i) {
    if (c[i] != expected[i]) return {};
  }
  return g;
}

float same(float x) { return x; }

uint16_t upper_half(float x) {  // exact for these small integers
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace

Gemm<float> blas_fp32() {
  static const Gemm<float> found = checked<float>("sgemm_", same);
  return found;
}

Gemm<uint16_t> blas_bf16() {
  static const Gemm<uint16_t> found = checked<uint16_t>("gemm_bf16bf16f32_", upper_half);
  return found;
}

}  // namespace ffnshape::nn
