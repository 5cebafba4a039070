#include "ffnshape/train/data_parallel.h"

#include <vector>

namespace ffnshape {
namespace {

// Sums `tensors` (same dtype and device) across ranks through one flat buffer, scales, and writes back.
void reduce_bucket(std::vector<torch::Tensor>& tensors, ProcessGroup& group, double scale) {
  std::vector<torch::Tensor> flat_parts;
  for (const auto& t : tensors) flat_parts.push_back(t.reshape(-1));
  std::vector<torch::Tensor> flat{torch::cat(flat_parts)};
  group.all_reduce_sum(flat);
  if (scale != 1.0) flat[0].mul_(scale);
  int64_t offset = 0;
  for (auto& t : tensors) {
    t.copy_(flat[0].narrow(0, offset, t.numel()).view_as(t));
    offset += t.numel();
  }
  tensors.clear();
}

}  // namespace

void broadcast_parameters(torch::nn::Module& model, ProcessGroup& group) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> tensors;
  for (auto& p : model.parameters()) tensors.push_back(p);
  for (auto& b : model.buffers()) tensors.push_back(b);
  for (auto& t : tensors) {
    std::vector<torch::Tensor> one{t.data()};
    group.broadcast(one, 0);
  }
}

void all_reduce_gradients(torch::nn::Module& model, ProcessGroup& group, double scale, int64_t bucket_bytes) {
  torch::NoGradGuard no_grad;
  // Every rank walks the parameters in the same order, so buckets match across ranks.
  std::vector<torch::Tensor> bucket;
  int64_t bytes = 0;
  for (auto& p : model.parameters()) {
    auto grad = p.grad();
    if (!grad.defined()) continue;
    const bool fits = bucket.empty() || (bucket.front().scalar_type() == grad.scalar_type() &&
                                         bytes + static_cast<int64_t>(grad.nbytes()) <= bucket_bytes);
    if (!fits) {
      reduce_bucket(bucket, group, scale);
      bytes = 0;
    }
    bucket.push_back(grad);
    bytes += static_cast<int64_t>(grad.nbytes());
  }
  if (!bucket.empty()) reduce_bucket(bucket, group, scale);
}

}  // namespace ffnshape
