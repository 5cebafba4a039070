#include "causal_attention_cpu.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <dlfcn.h>

#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "ffnshape/compat.h"
#include "fused_ops.h"

namespace ffnshape::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// Beyond this the saved probabilities (batch x heads x seq^2 floats per layer) outweigh the speed.
constexpr int64_t kMaxSeq = 512;
// Rows and columns of the score blocks: the products skip the blocks above the diagonal.
constexpr int64_t kBlock = 64;

// The Fortran BLAS entry point that LibTorch's CPU library exports (MKL in the PyPI wheel), found at
// run time so that a LibTorch without one still builds and runs (on SDPA). Sizes are passed as
// pointers to int64_t holding small values: a 32-bit-integer BLAS reads their low half on these
// little-endian machines, a 64-bit-integer one the whole.
using SgemmFn = void (*)(const char*, const char*, const int64_t*, const int64_t*, const int64_t*, const float*,
                         const float*, const int64_t*, const float*, const int64_t*, const float*, float*,
                         const int64_t*);

// Row-major C (m x n, leading dimension ldc) = op(A) op(B) + beta C, where op(A) is m x k (A stored
// transposed when a_t) and op(B) is k x n. Column-major BLAS computes C^T = op(B)^T op(A)^T.
struct Gemm {
  SgemmFn sgemm = nullptr;
  void operator()(bool a_t, bool b_t, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc) const {
    const char op_b = b_t ? 'T' : 'N', op_a = a_t ? 'T' : 'N';
    const float one = 1.0f;
    sgemm(&op_b, &op_a, &n, &m, &k, &one, b, &ldb, a, &lda, &beta, c, &ldc);
  }
};

// The BLAS, once it has computed a known 2 x 3 product correctly; an empty Gemm otherwise.
Gemm blas() {
  static const Gemm found = [] {
    Gemm g{reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"))};
    if (g.sgemm == nullptr) return Gemm{};
    const float a[4] = {1, 2, 3, 4}, b[6] = {1, 0, 2, 0, 1, 3};  // [[1,2],[3,4]] x [[1,0,2],[0,1,3]]
    float c[6] = {};
    g(false, false, 2, 3, 2, a, 2, b, 3, 0.0f, c, 3);
    const float expected[6] = {1, 2, 8, 3, 4, 18};
    for (int i = 0; i < 6; ++i) {
      if (c[i] != expected[i]) return Gemm{};
    }
    return g;
  }();
  return found;
}

// One head's rows: base pointer and the distance between consecutive sequence positions.
struct HeadRows {
  float* data;
  int64_t ld;
};

HeadRows head(const torch::Tensor& t, int64_t b, int64_t h) {
  return {t.data_ptr<float>() + b * t.stride(0) + h * t.stride(1), t.stride(2)};
}

// Forward for one head: p (seq x seq, row-major) = causal softmax(scale q k^T), o = p v, by block rows.
void forward_head(const Gemm& gemm, HeadRows q, HeadRows k, HeadRows v, HeadRows o, float* p, int64_t seq,
                  int64_t dim, float scale) {
  for (int64_t i0 = 0; i0 < seq; i0 += kBlock) {
    const int64_t rows = std::min(kBlock, seq - i0), seen = i0 + rows;
    float* p_rows = p + i0 * seq;
    gemm(false, true, rows, seen, dim, q.data + i0 * q.ld, q.ld, k.data, k.ld, 0.0f, p_rows, seq);
    kernels::causal_softmax_rows(p_rows, seq, rows, i0, seen, scale);
    gemm(false, false, rows, dim, seen, p_rows, seq, v.data, v.ld, 0.0f, o.data + i0 * o.ld, o.ld);
  }
}

// Backward for one head, given its saved p and the output gradient do. dq is written; dk and dv are
// written (beta 0) or added to (beta 1, the later query heads of a key-value group). ds is scratch.
void backward_head(const Gemm& gemm, HeadRows q, HeadRows k, HeadRows v, HeadRows d_o, const float* p, float* ds,
                   HeadRows dq, HeadRows dk, HeadRows dv, int64_t seq, int64_t dim, float scale, float beta) {
  for (int64_t i0 = 0; i0 < seq; i0 += kBlock) {  // block rows: ds, then dq = ds k
    const int64_t rows = std::min(kBlock, seq - i0), seen = i0 + rows;
    float* ds_rows = ds + i0 * seq;
    gemm(false, true, rows, seen, dim, d_o.data + i0 * d_o.ld, d_o.ld, v.data, v.ld, 0.0f, ds_rows, seq);
    kernels::causal_softmax_backward_rows(p + i0 * seq, ds_rows, seq, rows, i0, seen, scale);
    gemm(false, false, rows, dim, seen, ds_rows, seq, k.data, k.ld, 0.0f, dq.data + i0 * dq.ld, dq.ld);
  }
  for (int64_t j0 = 0; j0 < seq; j0 += kBlock) {  // block columns: key j0.. is seen by queries j0..seq-1
    const int64_t cols = std::min(kBlock, seq - j0), queries = seq - j0;
    const int64_t offset = j0 * seq + j0;
    gemm(true, false, cols, dim, queries, ds + offset, seq, q.data + j0 * q.ld, q.ld, beta, dk.data + j0 * dk.ld,
         dk.ld);
    gemm(true, false, cols, dim, queries, p + offset, seq, d_o.data + j0 * d_o.ld, d_o.ld, beta,
         dv.data + j0 * dv.ld, dv.ld);
  }
}

struct CausalAttentionFunction : public torch::autograd::Function<CausalAttentionFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q_in, const torch::Tensor& k_in,
                               const torch::Tensor& v_in) {
    RECORD_FUNCTION("ffnshape::causal_attention", std::vector<c10::IValue>{});  // named in profiler traces
    const auto q = rows_contiguous(q_in), k = rows_contiguous(k_in), v = rows_contiguous(v_in);
    const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), dim = q.size(3);
    const int64_t kv_heads = k.size(1), group = heads / kv_heads;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
    // (batch, seq, heads, dim) memory: the output projection reads it without a copy.
    auto out = torch::empty({batch, seq, heads, dim}, q.options()).transpose(1, 2);
    auto probs = torch::empty({batch, heads, seq, seq}, q.options());
    const Gemm gemm = blas();
    at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / heads, h = task % heads;
        forward_head(gemm, head(q, b, h), head(k, b, h / group), head(v, b, h / group), head(out, b, h),
                     probs.data_ptr<float>() + task * seq * seq, seq, dim, scale);
      }
    });
    ctx->save_for_backward({q, k, v, probs});
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    RECORD_FUNCTION("ffnshape::causal_attention_backward", std::vector<c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    const auto d_out = rows_contiguous(grads[0]);
    const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), dim = q.size(3);
    const int64_t kv_heads = k.size(1), group = heads / kv_heads;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
    // Gradients in their inputs' memory layouts, so that the views' backward needs no copy.
    auto dq = torch::empty_like(q), dk = torch::empty_like(k), dv = torch::empty_like(v);
    const Gemm gemm = blas();
    // One task per key-value head: its query heads add into the same dk and dv in turn.
    at::parallel_for(0, batch * kv_heads, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> ds(static_cast<size_t>(seq * seq));
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / kv_heads, g = task % kv_heads;
        for (int64_t h = g * group; h < (g + 1) * group; ++h) {
          const float* p = probs.data_ptr<float>() + (b * heads + h) * seq * seq;
          backward_head(gemm, head(q, b, h), head(k, b, g), head(v, b, g), head(d_out, b, h), p, ds.data(),
                        head(dq, b, h), head(dk, b, g), head(dv, b, g), seq, dim, scale, h == g * group ? 0.0f : 1.0f);
        }
      }
    });
    return {dq, dk, dv};
  }
};

}  // namespace

bool uses_cpu_attention_node(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const auto fp32_cpu = [](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.dim() == 4;
  };
  if (!fp32_cpu(q) || !fp32_cpu(k) || !fp32_cpu(v)) return false;
  const int64_t seq = q.size(2);
  const bool shapes_agree = k.sizes() == v.sizes() && k.size(0) == q.size(0) && k.size(2) == seq &&
                            k.size(3) == q.size(3) && k.size(1) > 0 && q.size(1) % k.size(1) == 0;
  // Each thread takes whole heads: with fewer heads than threads the flash kernel, which also splits
  // the sequence, keeps the cores busier.
  const bool fills_threads = q.size(0) * k.size(1) >= at::get_num_threads();
  return shapes_agree && seq > 0 && seq <= kMaxSeq && q.size(3) > 0 && fills_threads && blas().sgemm != nullptr;
}

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  if (!uses_cpu_attention_node(q, k, v)) return compat::causal_attention(q, k, v);
  return CausalAttentionFunction::apply(q, k, v);
}

}  // namespace ffnshape::nn
