// Internal to src/nn: the BLAS that LibTorch's CPU library exports (MKL in the PyPI wheel), called
// directly for the attention nodes' many small products, which ATen would wrap in tensors one by one.
// Found at run time, so that a LibTorch without it still builds and runs (the callers then fall back
// to at::scaled_dot_product_attention).
#pragma once

#include <cstdint>

namespace ffnshape::nn {

// Row-major C (m x n, leading dimension ldc) = op(A) op(B) + beta C, where op(A) is m x k (A stored
// transposed when a_t) and op(B) is k x n, with fp32 accumulation and output.
template <typename T>
struct Gemm {
  using Fn = void (*)(const char*, const char*, const int64_t*, const int64_t*, const int64_t*, const float*,
                      const T*, const int64_t*, const T*, const int64_t*, const float*, float*, const int64_t*);
  Fn fn = nullptr;

  explicit operator bool() const { return fn != nullptr; }
  // Column-major BLAS computes C^T = op(B)^T op(A)^T.
  void operator()(bool a_t, bool b_t, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                  int64_t ldb, float beta, float* c, int64_t ldc) const {
    const char op_b = b_t ? 'T' : 'N', op_a = a_t ? 'T' : 'N';
    const float one = 1.0f;
    fn(&op_b, &op_a, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &ldc);
  }
};

// fp32 products (sgemm_), and bf16 ones (MKL's gemm_bf16bf16f32_: bf16 operands as their 16 bits,
// fp32 accumulation and result). Each is empty unless it computed a known product correctly.
Gemm<float> blas_fp32();
Gemm<uint16_t> blas_bf16();

}  // namespace ffnshape::nn
