// Internal to src/nn: the language model's loss as one autograd node with one-pass CPU kernels
// (cpu_kernels.h): the composite formula's values and gradients to fp32 rounding, without the
// log-probability matrix that cross_entropy writes and keeps. Other devices and dtypes run the
// composite formula itself.
#pragma once

#include <torch/torch.h>

namespace ffnshape::nn {

struct LossTerms {
  torch::Tensor cross_entropy;  // mean over counted rows of logsumexp(row) - row[target]
  torch::Tensor z_loss;         // z_weight * mean over counted rows of logsumexp(row)^2
};

// logits: (rows, vocab), fp32; targets: (rows,) int64, ignore_index marks rows left out of both means.
LossTerms cross_entropy_with_z_loss(const torch::Tensor& logits, const torch::Tensor& targets, int64_t ignore_index,
                                    double z_weight);

}  // namespace ffnshape::nn
