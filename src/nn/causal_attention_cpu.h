// Internal to src/nn: causal self-attention for fp32 and bf16 training on the CPU as one autograd node.
//
// LibTorch's CPU flash-attention kernel runs its matrix products in small tiles, recomputes the
// probabilities in backward and reaches about a third of the GEMM rate on training shapes (batch x
// heads >= threads, sequences of a few hundred). This node keeps the probabilities instead (the
// lower block triangle of a seq x seq matrix per head, saved for backward), runs every product as
// one BLAS call per head and block row or column, skipping the blocks above the diagonal, and does
// the softmax and its backward in one pass per row (cpu_kernels.h). Outside its range (other
// devices or dtypes, longer sequences, too few heads to fill the threads, no BLAS found) callers
// get at::scaled_dot_product_attention, which stays the reference in the tests.
//
// In bf16 (autocast) the products take bf16 operands with fp32 accumulation (MKL's bf16 GEMM, which
// runs on AVX512_BF16 / AMX where the CPU has them), the softmax and its backward run in fp32, and
// the probabilities are kept in bf16: the precision of LibTorch's flash kernel, whose bf16 backward
// is several times slower than its forward on these shapes.
#pragma once

#include <torch/torch.h>

#include <cmath>

namespace ffnshape::nn {

// q: (batch, heads, seq, head_dim); k, v: (batch, kv_heads, seq, head_dim) with heads a multiple of
// kv_heads (grouped-query attention). Query i attends to keys 0..i with scale 1/sqrt(head_dim).
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// Whether causal_attention takes the CPU node for these inputs (tests and benchmarks ask).
bool uses_cpu_attention_node(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

// Shared by the two nodes: beyond kAttentionMaxSeq the saved probabilities (batch x heads x seq^2 per
// layer) outweigh the speed; score blocks are kAttentionBlock rows and columns, and the products
// skip the blocks above the diagonal.
constexpr int64_t kAttentionMaxSeq = 512;
constexpr int64_t kAttentionBlock = 64;

// The softmax scale both nodes apply to q k^T: 1 / sqrt(head_dim).
inline float attention_scale(int64_t head_dim) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

// The bf16 node (causal_attention_bf16.cpp), for inputs that uses_cpu_attention_node accepts.
torch::Tensor causal_attention_bf16(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

}  // namespace ffnshape::nn
