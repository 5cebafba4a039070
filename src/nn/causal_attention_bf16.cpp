// The bf16 CPU attention node: causal_attention_cpu.cpp's fp32 node with bf16 operands. Each product
// accumulates in fp32 into a per-thread scratch block, which is rounded to bf16 once where a bf16
// tensor is the result (outputs, gradients) or the next product's operand (probabilities, ds).
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <vector>

#include "causal_attention_cpu.h"
#include "cpu_blas.h"
#include "cpu_kernels.h"
#include "fused_ops.h"

namespace ffnshape::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;
using Bf16 = uint16_t;  // a bf16 value's bits, as the BLAS and the row kernels take it
constexpr int64_t kBlock = kAttentionBlock;

struct HeadRows {
  Bf16* data;
  int64_t ld;
};

HeadRows head(const torch::Tensor& t, int64_t b, int64_t h) {
  return {bf16_bits(t) + b * t.stride(0) + h * t.stride(1), t.stride(2)};
}

// Rounds `rows` rows of `cols` fp32 values (leading dimension ld_from) into bf16 rows (ld_to).
void round_rows(const float* from, int64_t ld_from, int64_t rows, int64_t cols, Bf16* to, int64_t ld_to) {
  for (int64_t r = 0; r < rows; ++r) kernels::float_to_bf16(from + r * ld_from, cols, to + r * ld_to);
}

// Per-thread fp32 blocks for the products' results.
struct Scratch {
  std::vector<float> scores, rows_out, p_rows;
  Scratch(int64_t seq, int64_t dim)
      : scores(static_cast<size_t>(kBlock * seq)),
        rows_out(static_cast<size_t>(kBlock * dim)),
        p_rows(static_cast<size_t>(kBlock * seq)) {}
};

// Forward for one head: p (seq x seq bf16, row-major) = causal softmax(scale q k^T) computed in fp32,
// o = p v, by block rows.
void forward_head(const Gemm<Bf16>& gemm, HeadRows q, HeadRows k, HeadRows v, HeadRows o, Bf16* p, int64_t seq,
                  int64_t dim, float scale, Scratch& scratch) {
  float* scores = scratch.scores.data();
  float* o_rows = scratch.rows_out.data();
  for (int64_t i0 = 0; i0 < seq; i0 += kBlock) {
    const int64_t rows = std::min(kBlock, seq - i0), seen = i0 + rows;
    gemm(false, true, rows, seen, dim, q.data + i0 * q.ld, q.ld, k.data, k.ld, 0.0f, scores, seq);
    kernels::causal_softmax_rows(scores, seq, rows, i0, seen, scale);
    round_rows(scores, seq, rows, seen, p + i0 * seq, seq);
    gemm(false, false, rows, dim, seen, p + i0 * seq, seq, v.data, v.ld, 0.0f, o_rows, dim);
    round_rows(o_rows, dim, rows, dim, o.data + i0 * o.ld, o.ld);
  }
}

// Backward for one query head: its dq, and its share of its key-value head's dk and dv, written
// (beta 0, the group's first query head) or added (beta 1) into the fp32 sums dk_sum and dv_sum
// (seq x dim), which the caller rounds once per group. ds is seq x seq bf16 scratch.
struct HeadGradients {
  HeadRows q, d_o, dq;
  const Bf16* p;
};

void backward_query_head(const Gemm<Bf16>& gemm, const HeadGradients& h, HeadRows k, HeadRows v, Bf16* ds,
                         float* dk_sum, float* dv_sum, int64_t seq, int64_t dim, float scale, float beta,
                         Scratch& scratch) {
  float* dp = scratch.scores.data();
  float* p_rows = scratch.p_rows.data();
  float* dq_rows = scratch.rows_out.data();
  for (int64_t i0 = 0; i0 < seq; i0 += kBlock) {  // block rows: ds, then dq = ds k
    const int64_t rows = std::min(kBlock, seq - i0), seen = i0 + rows;
    gemm(false, true, rows, seen, dim, h.d_o.data + i0 * h.d_o.ld, h.d_o.ld, v.data, v.ld, 0.0f, dp, seq);
    for (int64_t r = 0; r < rows; ++r) kernels::bf16_to_float(h.p + (i0 + r) * seq, seen, p_rows + r * seq);
    kernels::causal_softmax_backward_rows(p_rows, dp, seq, rows, i0, seen, scale);
    round_rows(dp, seq, rows, seen, ds + i0 * seq, seq);
    gemm(false, false, rows, dim, seen, ds + i0 * seq, seq, k.data, k.ld, 0.0f, dq_rows, dim);
    round_rows(dq_rows, dim, rows, dim, h.dq.data + i0 * h.dq.ld, h.dq.ld);
  }
  for (int64_t j0 = 0; j0 < seq; j0 += kBlock) {  // block columns: key j0.. is seen by queries j0..seq-1
    const int64_t cols = std::min(kBlock, seq - j0), queries = seq - j0;
    const int64_t offset = j0 * seq + j0;
    gemm(true, false, cols, dim, queries, ds + offset, seq, h.q.data + j0 * h.q.ld, h.q.ld, beta, dk_sum + j0 * dim,
         dim);
    gemm(true, false, cols, dim, queries, h.p + offset, seq, h.d_o.data + j0 * h.d_o.ld, h.d_o.ld, beta,
         dv_sum + j0 * dim, dim);
  }
}

struct CausalAttentionBf16Function : public torch::autograd::Function<CausalAttentionBf16Function> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q_in, const torch::Tensor& k_in,
                               const torch::Tensor& v_in) {
    RECORD_FUNCTION("ffnshape::causal_attention", std::vector<c10::IValue>{});  // named in profiler traces
    const auto q = rows_contiguous(q_in), k = rows_contiguous(k_in), v = rows_contiguous(v_in);
    const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), dim = q.size(3);
    const int64_t group = heads / k.size(1);
    // (batch, seq, heads, dim) memory: the output projection reads it without a copy.
    auto out = torch::empty({batch, seq, heads, dim}, q.options()).transpose(1, 2);
    auto probs = torch::empty({batch, heads, seq, seq}, q.options());
    const Gemm<Bf16> gemm = blas_bf16();
    at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
      Scratch scratch(seq, dim);
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / heads, h = task % heads;
        forward_head(gemm, head(q, b, h), head(k, b, h / group), head(v, b, h / group), head(out, b, h),
                     bf16_bits(probs) + task * seq * seq, seq, dim, attention_scale(dim), scratch);
      }
    });
    ctx->save_for_backward({q, k, v, probs});
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    RECORD_FUNCTION("ffnshape::causal_attention_backward", std::vector<c10::IValue>{});
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    const auto d_out = rows_contiguous(grads[0].to(torch::kBFloat16));
    const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), dim = q.size(3);
    const int64_t kv_heads = k.size(1), group = heads / kv_heads;
    // Gradients in their inputs' memory layouts, so that the views' backward needs no copy.
    auto dq = torch::empty_like(q), dk = torch::empty_like(k), dv = torch::empty_like(v);
    const Gemm<Bf16> gemm = blas_bf16();
    // One task per key-value head: its query heads add into the same fp32 dk and dv sums in turn.
    at::parallel_for(0, batch * kv_heads, 1, [&](int64_t begin, int64_t end) {
      Scratch scratch(seq, dim);
      std::vector<Bf16> ds(static_cast<size_t>(seq * seq));
      std::vector<float> dk_sum(static_cast<size_t>(seq * dim)), dv_sum(static_cast<size_t>(seq * dim));
      for (int64_t task = begin; task < end; ++task) {
        const int64_t b = task / kv_heads, g = task % kv_heads;
        for (int64_t h = g * group; h < (g + 1) * group; ++h) {
          const HeadGradients grads_h{head(q, b, h), head(d_out, b, h), head(dq, b, h),
                                      bf16_bits(probs) + (b * heads + h) * seq * seq};
          backward_query_head(gemm, grads_h, head(k, b, g), head(v, b, g), ds.data(), dk_sum.data(), dv_sum.data(),
                              seq, dim, attention_scale(dim), h == g * group ? 0.0f : 1.0f, scratch);
        }
        const HeadRows dk_rows = head(dk, b, g), dv_rows = head(dv, b, g);
        round_rows(dk_sum.data(), dim, seq, dim, dk_rows.data, dk_rows.ld);
        round_rows(dv_sum.data(), dim, seq, dim, dv_rows.data, dv_rows.ld);
      }
    });
    return {dq, dk, dv};
  }
};

}  // namespace

torch::Tensor causal_attention_bf16(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  return CausalAttentionBf16Function::apply(q, k, v);
}

}  // namespace ffnshape::nn
