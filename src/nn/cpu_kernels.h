// Internal to src/nn: the row loops of the fused loss and of causal attention's softmax, each one pass
// over memory where ATen runs several kernels. Plain C++ on raw pointers, without torch headers: each
// function is compiled for AVX-512, AVX2 and baseline x86-64 and the loader picks the best one the
// CPU has. The callers (fused_ops.cpp, causal_attention_cpu.cpp) split the work between threads and
// keep the autograd bookkeeping.
#pragma once

#include <cstdint>

namespace ffnshape::nn::kernels {

// For rows [begin, end) of a row-major `cols`-wide matrix: lse[r] = log(sum_j exp(x[r, j])).
void logsumexp_rows(const float* x, int64_t cols, int64_t begin, int64_t end, float* lse);

// For rows [begin, end): out[r, j] = scale[r] * exp(x[r, j] - lse[r]), the softmax scaled per row.
void scaled_softmax_rows(const float* x, const float* lse, const float* scale, int64_t cols, int64_t begin,
                         int64_t end, float* out);

// Causal softmax of a block of one head's attention scores, in place. The block is `rows` rows of a
// row-major matrix with leading dimension ld; row r is query first_row + r and holds the scores of
// keys 0 .. cols - 1. Each row becomes softmax(scale * row) over keys 0 .. first_row + r and 0 after.
void causal_softmax_rows(float* scores, int64_t ld, int64_t rows, int64_t first_row, int64_t cols, float scale);

// Its backward, in place over the probabilities' gradient dp (same block layout as above, p the
// forward's output): ds = scale * p * (dp - sum_j dp_j p_j) up to the diagonal, 0 after.
void causal_softmax_backward_rows(const float* p, float* dp, int64_t ld, int64_t rows, int64_t first_row,
                                  int64_t cols, float scale);

// RMSNorm of rows [begin, end) of a row-major `cols`-wide matrix: rstd[r] = 1 / sqrt(mean_j x[r, j]^2 + eps)
// and y[r, j] = x[r, j] * rstd[r] * w[j].
void rms_norm_rows(const float* x, const float* w, int64_t cols, int64_t begin, int64_t end, float eps, float* rstd,
                   float* y);

// Its backward for the same rows, with g the output's gradient and xhat = x * rstd:
// dx = (g w - xhat * mean_j(g w xhat)) * rstd, and dw_sum[j] += sum over the rows of g[r, j] xhat[r, j].
void rms_norm_backward_rows(const float* x, const float* w, const float* rstd, const float* g, int64_t cols,
                            int64_t begin, int64_t end, float* dx, float* dw_sum);

// SwiGLU's product over n elements: h = silu(g) * u, silu(g) = g * sigmoid(g).
void swiglu(const float* g, const float* u, int64_t n, float* h);

// Its backward in one pass: dg = dh * u * s * (1 + g * (1 - s)), du = dh * g * s, s = sigmoid(g).
void swiglu_backward(const float* g, const float* u, const float* dh, int64_t n, float* dg, float* du);

// Rotary embedding of `rows` rows of 2 * half floats (row r at x + r * ld_x, out at y + r * ld_y; cos
// and sin hold half floats per row, row-major): (y1, y2) = (x1 c - sign x2 s, x2 c + sign x1 s) for
// the two halves x1, x2. sign 1 rotates forward; sign -1 rotates back, which is the backward.
void rotate_half_rows(const float* x, int64_t ld_x, const float* cos, const float* sin, int64_t rows, int64_t half,
                      float sign, float* y, int64_t ld_y);

// bf16 variants for training under autocast. A bf16 value is passed as its 16 bits (the upper half
// of the fp32 with the same sign, exponent and leading mantissa); the kernels compute in fp32 and
// round once per output, to nearest even (NaN stays NaN).
void bf16_to_float(const uint16_t* x, int64_t n, float* y);
void float_to_bf16(const float* x, int64_t n, uint16_t* y);

// logsumexp_rows of bf16 rows.
void logsumexp_rows_bf16(const uint16_t* x, int64_t cols, int64_t begin, int64_t end, float* lse);

// The loss's gradient for bf16 logits, rounded once: out[r, j] = scale[r] * exp(x[r, j] - lse[r]),
// minus target_shift[r] at j = target[r] (no column when target[r] is outside [0, cols)).
void loss_gradient_rows_bf16(const uint16_t* x, const float* lse, const float* scale, const int64_t* target,
                             const float* target_shift, int64_t cols, int64_t begin, int64_t end, uint16_t* out);

// RMSNorm of fp32 rows with bf16 output (rounded once), and its backward from a bf16 gradient (dx,
// rstd and the weight's gradient stay fp32): the norm feeding autocast's bf16 products.
void rms_norm_rows_bf16_out(const float* x, const float* w, int64_t cols, int64_t begin, int64_t end, float eps,
                            float* rstd, uint16_t* y);
void rms_norm_backward_rows_bf16_grad(const float* x, const float* w, const float* rstd, const uint16_t* g,
                                      int64_t cols, int64_t begin, int64_t end, float* dx, float* dw_sum);

// swiglu and swiglu_backward on bf16 tensors.
void swiglu_bf16(const uint16_t* g, const uint16_t* u, int64_t n, uint16_t* h);
void swiglu_backward_bf16(const uint16_t* g, const uint16_t* u, const uint16_t* dh, int64_t n, uint16_t* dg,
                          uint16_t* du);

// rotate_half_rows on bf16 rows (cos and sin stay fp32).
void rotate_half_rows_bf16(const uint16_t* x, int64_t ld_x, const float* cos, const float* sin, int64_t rows,
                           int64_t half, float sign, uint16_t* y, int64_t ld_y);

}  // namespace ffnshape::nn::kernels
