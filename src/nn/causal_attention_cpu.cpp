#include "causal_attention_cpu.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <cmath>
#include <vector>

#include "cpu_blas.h"
#include "cpu_kernels.h"
#include "ffnshape/compat.h"
#include "fused_ops.h"

namespace ffnshape::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

constexpr int64_t kBlock = kAttentionBlock;

// One head's rows: base pointer and the distance between consecutive sequence positions.
struct HeadRows {
  float* data;
  int64_t ld;
};

HeadRows head(const torch::Tensor& t, int64_t b, int64_t h) {
  return {t.data_ptr<float>() + b * t.stride(0) + h * t.stride(1), t.stride(2)};
}

// Forward for one head: p (seq x seq, row-major) = causal softmax(scale q k^T), o = p v, by block rows.
void forward_head(const Gemm<float>& gemm, HeadRows q, HeadRows k, HeadRows v, HeadRows o, float* p, int64_t seq,
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
void backward_head(const Gemm<float>& gemm, HeadRows q, HeadRows k, HeadRows v, HeadRows d_o, const float* p, float* ds,
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
    const float scale = attention_scale(dim);
    // (batch, seq, heads, dim) memory: the output projection reads it without a copy.
    auto out = torch::empty({batch, seq, heads, dim}, q.options()).transpose(1, 2);
    auto probs = torch::empty({batch, heads, seq, seq}, q.options());
    const Gemm<float> gemm = blas_fp32();
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
    const float scale = attention_scale(dim);
    // Gradients in their inputs' memory layouts, so that the views' backward needs no copy.
    auto dq = torch::empty_like(q), dk = torch::empty_like(k), dv = torch::empty_like(v);
    const Gemm<float> gemm = blas_fp32();
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
  const auto dtype = q.scalar_type();
  const bool has_blas = dtype == torch::kFloat ? static_cast<bool>(blas_fp32())
                        : dtype == torch::kBFloat16 ? static_cast<bool>(blas_bf16())
                                                    : false;
  const auto node_input = [&](const torch::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == dtype && t.dim() == 4;
  };
  if (!has_blas || !node_input(q) || !node_input(k) || !node_input(v)) return false;
  const int64_t seq = q.size(2);
  const bool shapes_agree = k.sizes() == v.sizes() && k.size(0) == q.size(0) && k.size(2) == seq &&
                            k.size(3) == q.size(3) && k.size(1) > 0 && q.size(1) % k.size(1) == 0;
  // Each thread takes whole heads: with fewer heads than threads the flash kernel, which also splits
  // the sequence, keeps the cores busier.
  const bool fills_threads = q.size(0) * k.size(1) >= at::get_num_threads();
  return shapes_agree && seq > 0 && seq <= kAttentionMaxSeq && q.size(3) > 0 && fills_threads;
}

torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  if (!uses_cpu_attention_node(q, k, v)) return compat::causal_attention(q, k, v);
  if (q.scalar_type() == torch::kBFloat16) return causal_attention_bf16(q, k, v);
  return CausalAttentionFunction::apply(q, k, v);
}

}  // namespace ffnshape::nn
