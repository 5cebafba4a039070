// Internal: validation loss with some layers' FFN updates perturbed (capture.cpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ffnshape/profile/work_profiler.h"

namespace ffnshape::profile {

// Mean cross-entropy over the batches' counted targets, with `perturbation` applied to every layer in
// `layers` (none: the unperturbed loss). `seed` fixes the noise.
double perturbed_loss(nn::TransformerLM& model, const std::vector<std::pair<torch::Tensor, torch::Tensor>>& batches,
                      const std::vector<int64_t>& layers, const Perturbation& perturbation, uint64_t seed);

}  // namespace ffnshape::profile
