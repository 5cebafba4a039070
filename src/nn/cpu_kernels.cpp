#include "cpu_kernels.h"

#include <cmath>
#include <cstring>

// Each loop is written so that GCC vectorises it (no branches, fixed-width accumulators; the file is
// compiled with -fno-trapping-math, without which GCC keeps the clamps' compares as branches outside
// AVX-512), and is cloned per instruction set (x86-64-v4: AVX-512; v3: AVX2 and FMA); the dynamic
// loader resolves the clone once, by the CPU's features.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FFNSHAPE_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FFNSHAPE_CPU_CLONES
#endif

namespace ffnshape::nn::kernels {
namespace {

// exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln 2 / 2: Cody-Waite reduction with ln 2 split in
// two, and Cephes' degree-6 polynomial for exp(r): relative error below 1.5 ulp on [-87, 88]. NaN
// stays NaN (the clamps compare false).
inline float exp_inline(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const float n = (x * 1.44269504088896341f + shifter) - shifter;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

constexpr int kLanes = 16;  // one AVX-512 register of floats; two AVX2 ones

}  // namespace

FFNSHAPE_CPU_CLONES
void logsumexp_rows(const float* __restrict x, int64_t cols, int64_t begin, int64_t end, float* __restrict lse) {
  const int64_t body = cols - cols % kLanes;
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * cols;
    float lane_max[kLanes];
    for (int l = 0; l < kLanes; ++l) lane_max[l] = -INFINITY;
    for (int64_t j = 0; j < body; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) lane_max[l] = lane_max[l] > row[j + l] ? lane_max[l] : row[j + l];
    }
    float m = -INFINITY;
    for (int l = 0; l < kLanes; ++l) m = m > lane_max[l] ? m : lane_max[l];
    for (int64_t j = body; j < cols; ++j) m = m > row[j] ? m : row[j];
    if (std::isinf(m)) {  // all -inf gives -inf, any +inf gives +inf; a NaN reaches lse through the sum
      lse[r] = m;
      continue;
    }
    float lane_sum[kLanes] = {};
    for (int64_t j = 0; j < body; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) lane_sum[l] += exp_inline(row[j + l] - m);
    }
    float sum = 0.0f;
    for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
    for (int64_t j = body; j < cols; ++j) sum += exp_inline(row[j] - m);
    lse[r] = m + std::log(sum);
  }
}

FFNSHAPE_CPU_CLONES
void scaled_softmax_rows(const float* __restrict x, const float* __restrict lse, const float* __restrict scale,
                         int64_t cols, int64_t begin, int64_t end, float* __restrict out) {
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * cols;
    float* out_row = out + r * cols;
    const float shift = lse[r], s = scale[r];
    for (int64_t j = 0; j < cols; ++j) out_row[j] = s * exp_inline(row[j] - shift);
  }
}

}  // namespace ffnshape::nn::kernels
