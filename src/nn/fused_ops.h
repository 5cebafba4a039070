// Internal to src/nn: autograd nodes with one-pass CPU kernels (cpu_kernels.h) for training on the
// CPU, where the composite formulas run several ATen kernels and keep their intermediates: the
// language model's loss (without the log-probability matrix that cross_entropy writes and keeps),
// rotary embeddings, RMSNorm and SwiGLU's product. fp32 values and gradients equal the composite
// formulas' to fp32 rounding. Rotary embeddings and SwiGLU also take bf16 tensors (autocast), computed
// in fp32 and rounded once per value, where the composite rounds after each operator. Other devices
// and dtypes run the composite formulas themselves.
#pragma once

#include <torch/torch.h>

namespace ffnshape::nn {

struct LossTerms {
  torch::Tensor cross_entropy;  // mean over counted rows of logsumexp(row) - row[target]
  torch::Tensor z_loss;         // z_weight * mean over counted rows of logsumexp(row)^2
};

// logits: (rows, vocab), fp32 or bf16 (the sums and the losses are fp32 for both); targets: (rows,)
// int64, ignore_index marks rows left out of both means.
LossTerms cross_entropy_with_z_loss(const torch::Tensor& logits, const torch::Tensor& targets, int64_t ignore_index,
                                    double z_weight);

// Rotary embedding of x (batch, heads, seq, 2 * half) with cos and sin (seq, half): the first and
// second halves of each head are rotated as (x1 c - x2 s, x2 c + x1 s). The result has x's layout.
torch::Tensor rotate_half(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

// RMSNorm x / sqrt(mean(x^2) + eps) * weight over x's last dimension as one node, for fp32 CPU
// tensors (uses_cpu_rms_norm); rms_norm.h's module runs it there and its own node elsewhere. With
// bf16_out the result is bf16 (what autocast's products would round it to), else fp32.
bool uses_cpu_rms_norm(const torch::Tensor& x, const torch::Tensor& weight);
torch::Tensor rms_norm_cpu(const torch::Tensor& x, const torch::Tensor& weight, double eps, bool bf16_out = false);

// SwiGLU's product silu(gate) * up for two tensors of one shape.
torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up);

// A bf16 tensor's data as the 16-bit patterns that the row kernels and the BLAS take.
uint16_t* bf16_bits(const torch::Tensor& t);

// t itself when its last dimension is contiguous (what the row kernels and the BLAS need; the other
// dimensions may have any strides), else a contiguous copy.
torch::Tensor rows_contiguous(const torch::Tensor& t);

}  // namespace ffnshape::nn
