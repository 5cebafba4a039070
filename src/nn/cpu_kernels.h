// Internal to src/nn: the loss's row loops, each one pass over memory where ATen runs several kernels.
// Plain C++ on raw pointers, without torch headers: each function is compiled for AVX-512, AVX2 and
// baseline x86-64 and the loader picks the best one the CPU has. The caller (fused_ops.cpp) splits
// the rows between threads and keeps the autograd bookkeeping.
#pragma once

#include <cstdint>

namespace ffnshape::nn::kernels {

// For rows [begin, end) of a row-major `cols`-wide matrix: lse[r] = log(sum_j exp(x[r, j])).
void logsumexp_rows(const float* x, int64_t cols, int64_t begin, int64_t end, float* lse);

// For rows [begin, end): out[r, j] = scale[r] * exp(x[r, j] - lse[r]), the softmax scaled per row.
void scaled_softmax_rows(const float* x, const float* lse, const float* scale, int64_t cols, int64_t begin,
                         int64_t end, float* out);

}  // namespace ffnshape::nn::kernels
