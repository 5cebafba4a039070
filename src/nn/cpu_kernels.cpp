#include "cpu_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

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
  const float shifted = x * 1.44269504088896341f + shifter;  // n sits in its low mantissa bits
  const float n = shifted - shifter;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n built from shifted's bits (shifter's are 0x4B400000), in unsigned arithmetic: converting a
  // NaN n to int would be undefined behaviour; here its bits wrap harmlessly and p stays NaN.
  uint32_t shifted_bits;
  std::memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
  const uint32_t bits = (shifted_bits - 0x4B400000u + 127u) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// sigmoid(x) = 1 / (1 + exp(-x)); exp_inline's clamps keep it in [~6e-39, 1], and NaN stays NaN.
inline float sigmoid_inline(float x) { return 1.0f / (1.0f + exp_inline(-x)); }

// Flushes subnormal results and inputs to zero while a kernel runs, restoring the caller's mode after.
// The kernels never need subnormals, but with -fno-trapping-math GCC evaluates both sides of a clamp
// in every vector lane and blends, and a discarded lane's product (say g times the sigmoid at the
// clamp, 1e-38) can land in the subnormal range, where each vector instruction takes a microcode
// assist: SwiGLU ran 6x slower for it, on ordinary inputs.
class FlushSubnormals {
 public:
#if defined(__x86_64__)
  FlushSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ and DAZ
  ~FlushSubnormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

// bf16 is the upper half of an fp32: widening is a shift; narrowing rounds to nearest even by adding
// 0x7FFF plus the kept half's lowest bit before the shift, except for NaN, which becomes the quiet NaN
// (rounding could carry its mantissa into infinity).
inline float from_bf16(uint16_t x) {
  const uint32_t bits = static_cast<uint32_t>(x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>((bits & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC0u : rounded);
}

// An element as fp32, for the row loops that take fp32 and bf16 rows alike.
inline float value(float x) { return x; }
inline float value(uint16_t x) { return from_bf16(x); }
inline void put(float* to, float v) { *to = v; }
inline void put(uint16_t* to, float v) { *to = to_bf16(v); }

constexpr int kLanes = 16;  // one AVX-512 register of floats; two AVX2 ones

// Reductions keep kLanes partial results: GCC vectorises them without reassociating float sums.
template <typename T>
inline float max_of(const T* __restrict x, int64_t n) {
  const int64_t body = n - n % kLanes;
  float lane_max[kLanes];
  for (int l = 0; l < kLanes; ++l) lane_max[l] = -INFINITY;
  for (int64_t j = 0; j < body; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane_max[l] = lane_max[l] > value(x[j + l]) ? lane_max[l] : value(x[j + l]);
  }
  float m = -INFINITY;
  for (int l = 0; l < kLanes; ++l) m = m > lane_max[l] ? m : lane_max[l];
  for (int64_t j = body; j < n; ++j) m = m > value(x[j]) ? m : value(x[j]);
  return m;
}

inline float dot_of(const float* __restrict x, const float* __restrict y, int64_t n) {
  const int64_t body = n - n % kLanes;
  float lane_sum[kLanes] = {};
  for (int64_t j = 0; j < body; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane_sum[l] += x[j + l] * y[j + l];
  }
  float sum = 0.0f;
  for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
  for (int64_t j = body; j < n; ++j) sum += x[j] * y[j];
  return sum;
}

// x[j] = exp(scale * x[j] - shift) in place; returns the sum of the new values.
inline float exp_in_place(float* __restrict x, int64_t n, float scale, float shift) {
  const int64_t body = n - n % kLanes;
  float lane_sum[kLanes] = {};
  for (int64_t j = 0; j < body; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      x[j + l] = exp_inline(scale * x[j + l] - shift);
      lane_sum[l] += x[j + l];
    }
  }
  float sum = 0.0f;
  for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
  for (int64_t j = body; j < n; ++j) {
    x[j] = exp_inline(scale * x[j] - shift);
    sum += x[j];
  }
  return sum;
}

// logsumexp_rows for fp32 or bf16 rows.
template <typename T>
inline void logsumexp_rows_of(const T* __restrict x, int64_t cols, int64_t begin, int64_t end, float* __restrict lse) {
  const int64_t body = cols - cols % kLanes;
  for (int64_t r = begin; r < end; ++r) {
    const T* row = x + r * cols;
    const float m = max_of(row, cols);
    if (std::isinf(m)) {  // all -inf gives -inf, any +inf gives +inf; a NaN reaches lse through the sum
      lse[r] = m;
      continue;
    }
    float lane_sum[kLanes] = {};
    for (int64_t j = 0; j < body; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) lane_sum[l] += exp_inline(value(row[j + l]) - m);
    }
    float sum = 0.0f;
    for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
    for (int64_t j = body; j < cols; ++j) sum += exp_inline(value(row[j]) - m);
    lse[r] = m + std::log(sum);
  }
}

}  // namespace

FFNSHAPE_CPU_CLONES
void logsumexp_rows(const float* __restrict x, int64_t cols, int64_t begin, int64_t end, float* __restrict lse) {
  const FlushSubnormals flush;
  logsumexp_rows_of(x, cols, begin, end, lse);
}

FFNSHAPE_CPU_CLONES
void logsumexp_rows_bf16(const uint16_t* __restrict x, int64_t cols, int64_t begin, int64_t end,
                         float* __restrict lse) {
  const FlushSubnormals flush;
  logsumexp_rows_of(x, cols, begin, end, lse);
}

FFNSHAPE_CPU_CLONES
void scaled_softmax_rows(const float* __restrict x, const float* __restrict lse, const float* __restrict scale,
                         int64_t cols, int64_t begin, int64_t end, float* __restrict out) {
  const FlushSubnormals flush;
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * cols;
    float* out_row = out + r * cols;
    const float shift = lse[r], s = scale[r];
    for (int64_t j = 0; j < cols; ++j) out_row[j] = s * exp_inline(row[j] - shift);
  }
}

FFNSHAPE_CPU_CLONES
void loss_gradient_rows_bf16(const uint16_t* __restrict x, const float* __restrict lse, const float* __restrict scale,
                             const int64_t* __restrict target, const float* __restrict target_shift, int64_t cols,
                             int64_t begin, int64_t end, uint16_t* __restrict out) {
  const FlushSubnormals flush;
  for (int64_t r = begin; r < end; ++r) {
    const uint16_t* row = x + r * cols;
    uint16_t* out_row = out + r * cols;
    const float shift = lse[r], s = scale[r];
    for (int64_t j = 0; j < cols; ++j) out_row[j] = to_bf16(s * exp_inline(from_bf16(row[j]) - shift));
    const int64_t t = target[r];
    if (t >= 0 && t < cols) out_row[t] = to_bf16(s * exp_inline(from_bf16(row[t]) - shift) - target_shift[r]);
  }
}

FFNSHAPE_CPU_CLONES
void causal_softmax_rows(float* __restrict scores, int64_t ld, int64_t rows, int64_t first_row, int64_t cols,
                         float scale) {
  const FlushSubnormals flush;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = scores + r * ld;
    const int64_t seen = std::min(first_row + r + 1, cols);  // keys this query attends to
    const float shift = scale * max_of(row, seen);               // scale > 0 keeps the maximum
    const float inverse = 1.0f / exp_in_place(row, seen, scale, shift);
    for (int64_t j = 0; j < seen; ++j) row[j] *= inverse;
    std::fill(row + seen, row + cols, 0.0f);
  }
}

FFNSHAPE_CPU_CLONES
void causal_softmax_backward_rows(const float* __restrict p, float* __restrict dp, int64_t ld, int64_t rows,
                                  int64_t first_row, int64_t cols, float scale) {
  const FlushSubnormals flush;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p_row = p + r * ld;
    float* d_row = dp + r * ld;
    const int64_t seen = std::min(first_row + r + 1, cols);
    const float dot = dot_of(p_row, d_row, seen);
    for (int64_t j = 0; j < seen; ++j) d_row[j] = scale * p_row[j] * (d_row[j] - dot);
    std::fill(d_row + seen, d_row + cols, 0.0f);
  }
}

namespace {

// rms_norm_rows writing fp32 or bf16 rows.
template <typename Out>
inline void rms_norm_rows_to(const float* __restrict x, const float* __restrict w, int64_t cols, int64_t begin,
                             int64_t end, float eps, float* __restrict rstd, Out* __restrict y) {
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * cols;
    const float inverse = 1.0f / std::sqrt(dot_of(row, row, cols) / static_cast<float>(cols) + eps);
    rstd[r] = inverse;
    Out* out = y + r * cols;
    for (int64_t j = 0; j < cols; ++j) put(out + j, row[j] * inverse * w[j]);
  }
}

// rms_norm_backward_rows reading an fp32 or bf16 gradient.
template <typename Grad>
inline void rms_norm_backward_rows_from(const float* __restrict x, const float* __restrict w,
                                        const float* __restrict rstd, const Grad* __restrict g, int64_t cols,
                                        int64_t begin, int64_t end, float* __restrict dx, float* __restrict dw_sum) {
  const int64_t body = cols - cols % kLanes;
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * cols;
    const Grad* grad = g + r * cols;
    const float inverse = rstd[r];
    // mean(g w xhat) = rstd * mean(g w x)
    float lane_sum[kLanes] = {};
    for (int64_t j = 0; j < body; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) lane_sum[l] += value(grad[j + l]) * w[j + l] * row[j + l];
    }
    float sum = 0.0f;
    for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
    for (int64_t j = body; j < cols; ++j) sum += value(grad[j]) * w[j] * row[j];
    const float mean = inverse * sum / static_cast<float>(cols);
    float* out = dx + r * cols;
    for (int64_t j = 0; j < cols; ++j) {
      const float xhat = row[j] * inverse, gj = value(grad[j]);
      out[j] = (gj * w[j] - xhat * mean) * inverse;
      dw_sum[j] += gj * xhat;
    }
  }
}

}  // namespace

FFNSHAPE_CPU_CLONES
void rms_norm_rows(const float* __restrict x, const float* __restrict w, int64_t cols, int64_t begin, int64_t end,
                   float eps, float* __restrict rstd, float* __restrict y) {
  const FlushSubnormals flush;
  rms_norm_rows_to(x, w, cols, begin, end, eps, rstd, y);
}

FFNSHAPE_CPU_CLONES
void rms_norm_rows_bf16_out(const float* __restrict x, const float* __restrict w, int64_t cols, int64_t begin,
                            int64_t end, float eps, float* __restrict rstd, uint16_t* __restrict y) {
  const FlushSubnormals flush;
  rms_norm_rows_to(x, w, cols, begin, end, eps, rstd, y);
}

FFNSHAPE_CPU_CLONES
void rms_norm_backward_rows(const float* __restrict x, const float* __restrict w, const float* __restrict rstd,
                            const float* __restrict g, int64_t cols, int64_t begin, int64_t end, float* __restrict dx,
                            float* __restrict dw_sum) {
  const FlushSubnormals flush;
  rms_norm_backward_rows_from(x, w, rstd, g, cols, begin, end, dx, dw_sum);
}

FFNSHAPE_CPU_CLONES
void rms_norm_backward_rows_bf16_grad(const float* __restrict x, const float* __restrict w,
                                      const float* __restrict rstd, const uint16_t* __restrict g, int64_t cols,
                                      int64_t begin, int64_t end, float* __restrict dx, float* __restrict dw_sum) {
  const FlushSubnormals flush;
  rms_norm_backward_rows_from(x, w, rstd, g, cols, begin, end, dx, dw_sum);
}

namespace {

// SwiGLU and its backward over fp32 or bf16 elements, computed in fp32.
template <typename T>
inline void swiglu_of(const T* __restrict g, const T* __restrict u, int64_t n, T* __restrict h) {
  for (int64_t i = 0; i < n; ++i) {
    const float gate = value(g[i]);
    put(h + i, gate * sigmoid_inline(gate) * value(u[i]));
  }
}

template <typename T>
inline void swiglu_backward_of(const T* __restrict g, const T* __restrict u, const T* __restrict dh, int64_t n,
                               T* __restrict dg, T* __restrict du) {
  for (int64_t i = 0; i < n; ++i) {
    const float gate = value(g[i]), grad = value(dh[i]);
    const float s = sigmoid_inline(gate);
    const float silu = gate * s;
    put(du + i, grad * silu);
    put(dg + i, grad * value(u[i]) * (s + silu * (1.0f - s)));
  }
}

// The rotation of fp32 or bf16 rows, computed in fp32.
template <typename T>
inline void rotate_half_rows_of(const T* __restrict x, int64_t ld_x, const float* __restrict cos,
                                const float* __restrict sin, int64_t rows, int64_t half, float sign, T* __restrict y,
                                int64_t ld_y) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* x1 = x + r * ld_x;
    const T* x2 = x1 + half;
    const float* c = cos + r * half;
    const float* s = sin + r * half;
    T* y1 = y + r * ld_y;
    T* y2 = y1 + half;
    for (int64_t j = 0; j < half; ++j) {
      const float signed_sin = sign * s[j], a = value(x1[j]), b = value(x2[j]);
      put(y1 + j, a * c[j] - b * signed_sin);
      put(y2 + j, b * c[j] + a * signed_sin);
    }
  }
}

}  // namespace

FFNSHAPE_CPU_CLONES
void swiglu(const float* __restrict g, const float* __restrict u, int64_t n, float* __restrict h) {
  const FlushSubnormals flush;
  swiglu_of(g, u, n, h);
}

FFNSHAPE_CPU_CLONES
void swiglu_bf16(const uint16_t* __restrict g, const uint16_t* __restrict u, int64_t n, uint16_t* __restrict h) {
  const FlushSubnormals flush;
  swiglu_of(g, u, n, h);
}

FFNSHAPE_CPU_CLONES
void swiglu_backward(const float* __restrict g, const float* __restrict u, const float* __restrict dh, int64_t n,
                     float* __restrict dg, float* __restrict du) {
  const FlushSubnormals flush;
  swiglu_backward_of(g, u, dh, n, dg, du);
}

FFNSHAPE_CPU_CLONES
void swiglu_backward_bf16(const uint16_t* __restrict g, const uint16_t* __restrict u, const uint16_t* __restrict dh,
                          int64_t n, uint16_t* __restrict dg, uint16_t* __restrict du) {
  const FlushSubnormals flush;
  swiglu_backward_of(g, u, dh, n, dg, du);
}

FFNSHAPE_CPU_CLONES
void rotate_half_rows(const float* __restrict x, int64_t ld_x, const float* __restrict cos, const float* __restrict sin,
                      int64_t rows, int64_t half, float sign, float* __restrict y, int64_t ld_y) {
  const FlushSubnormals flush;
  rotate_half_rows_of(x, ld_x, cos, sin, rows, half, sign, y, ld_y);
}

FFNSHAPE_CPU_CLONES
void rotate_half_rows_bf16(const uint16_t* __restrict x, int64_t ld_x, const float* __restrict cos,
                           const float* __restrict sin, int64_t rows, int64_t half, float sign, uint16_t* __restrict y,
                           int64_t ld_y) {
  const FlushSubnormals flush;
  rotate_half_rows_of(x, ld_x, cos, sin, rows, half, sign, y, ld_y);
}

FFNSHAPE_CPU_CLONES
void bf16_to_float(const uint16_t* __restrict x, int64_t n, float* __restrict y) {
  const FlushSubnormals flush;
  for (int64_t i = 0; i < n; ++i) y[i] = from_bf16(x[i]);
}

FFNSHAPE_CPU_CLONES
void float_to_bf16(const float* __restrict x, int64_t n, uint16_t* __restrict y) {
  const FlushSubnormals flush;
  for (int64_t i = 0; i < n; ++i) y[i] = to_bf16(x[i]);
}

}  // namespace ffnshape::nn::kernels
