// Data parallelism over a ProcessGroup, independent of the model's structure: the same weights on
// every rank at the start, and gradients summed across ranks in flattened buckets (one collective per
// bucket rather than one per tensor).
#pragma once

#include <torch/torch.h>

#include <cstdint>

#include "ffnshape/train/process_group.h"

namespace ffnshape {

// Copies rank 0's parameters and buffers to every rank.
void broadcast_parameters(torch::nn::Module& model, ProcessGroup& group);

// Sums every defined gradient across the ranks and multiplies it by `scale` (1 / world size for a
// mean; the trainer passes its own token normalisation). Tensors are packed in order into buckets of
// about `bucket_bytes` per dtype; a tensor larger than a bucket travels alone.
void all_reduce_gradients(torch::nn::Module& model, ProcessGroup& group, double scale,
                          int64_t bucket_bytes = int64_t{25} << 20);

}  // namespace ffnshape
