#include "ffnshape/train/data_parallel.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <chrono>
#include <stdexcept>
#include <vector>

namespace ffnshape {

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

namespace {

// Gradients of several parameters reduced as one flat tensor.
struct Bucket {
  std::vector<torch::Tensor> params;
  std::vector<int64_t> offsets;       // of each parameter in `flat`
  std::vector<torch::Tensor> flat;    // one tensor; a vector because the collective takes one
  int64_t pending = 0;                // gradients of the armed backward still to come
  PendingCollective work;
};

}  // namespace

struct GradientSync::Impl {
  ProcessGroup& group;
  std::vector<Bucket> buckets;
  std::vector<char> ready;  // per parameter, in the armed backward
  std::vector<c10::intrusive_ptr<torch::autograd::Node>> accumulators;
  std::vector<uintptr_t> hooks;
  bool armed = false;
  size_t next_launch = 0;
  double exposed_wait_s = 0;

  explicit Impl(ProcessGroup& g) : group(g) {}

  void reset_pending() {
    for (auto& bucket : buckets) bucket.pending = static_cast<int64_t>(bucket.params.size());
    std::fill(ready.begin(), ready.end(), 0);
    next_launch = 0;
  }

  void launch(Bucket& bucket) {
    auto& flat = bucket.flat.front();
    for (size_t i = 0; i < bucket.params.size(); ++i) {
      const auto& grad = bucket.params[i].grad();
      auto slice = flat.narrow(0, bucket.offsets[i], bucket.params[i].numel());
      grad.defined() ? slice.copy_(grad.reshape(-1)) : slice.zero_();
    }
    bucket.work = group.all_reduce_sum_async(bucket.flat);
  }

  // Buckets start strictly in order: every rank must issue the same collectives in the same order.
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) launch(buckets[next_launch++]);
  }

  void on_gradient(size_t param, size_t bucket) {
    if (!armed || ready[param]) return;
    ready[param] = 1;
    if (--buckets[bucket].pending == 0) launch_ready();
  }
};

GradientSync::GradientSync(torch::nn::Module& model, ProcessGroup& group, int64_t bucket_bytes)
    : impl_(std::make_unique<Impl>(group)) {
  auto params = model.parameters();
  int64_t bytes = 0;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    auto& p = *it;
    if (!p.requires_grad()) continue;
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    auto* last = impl_->buckets.empty() ? nullptr : &impl_->buckets.back();
    if (!last || last->params.front().scalar_type() != p.scalar_type() ||
        last->params.front().device() != p.device() || bytes + size > bucket_bytes) {
      impl_->buckets.emplace_back();
      last = &impl_->buckets.back();
      bytes = 0;
    }
    last->offsets.push_back(bytes / static_cast<int64_t>(p.element_size()));
    last->params.push_back(p);
    bytes += size;
    const size_t param_index = impl_->ready.size(), bucket_index = impl_->buckets.size() - 1;
    impl_->ready.push_back(0);
    auto accumulator = torch::autograd::impl::grad_accumulator(p);
    auto* impl = impl_.get();
    impl_->hooks.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [impl, param_index, bucket_index](const torch::autograd::variable_list& outputs,
                                          const torch::autograd::variable_list&) {
          impl->on_gradient(param_index, bucket_index);
          return outputs;
        })));
    impl_->accumulators.push_back(std::move(accumulator));
  }
  for (auto& bucket : impl_->buckets) {
    int64_t elements = 0;
    for (const auto& p : bucket.params) elements += p.numel();
    bucket.flat.push_back(torch::empty({elements}, bucket.params.front().options()));
  }
  impl_->reset_pending();
}

GradientSync::~GradientSync() {
  for (size_t i = 0; i < impl_->accumulators.size(); ++i) impl_->accumulators[i]->del_post_hook(impl_->hooks[i]);
}

void GradientSync::arm() {
  impl_->reset_pending();
  impl_->armed = true;
}

void GradientSync::finish(double scale) {
  if (!impl_->armed) throw std::logic_error("GradientSync::finish without arm()");
  torch::NoGradGuard no_grad;
  auto& buckets = impl_->buckets;
  while (impl_->next_launch < buckets.size()) impl_->launch(buckets[impl_->next_launch++]);
  const auto start = std::chrono::steady_clock::now();
  for (auto& bucket : buckets) bucket.work.wait();
  impl_->exposed_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& bucket : buckets) {
    auto& flat = bucket.flat.front();
    if (scale != 1.0) flat.mul_(scale);
    for (size_t i = 0; i < bucket.params.size(); ++i) {
      auto& p = bucket.params[i];
      const auto slice = flat.narrow(0, bucket.offsets[i], p.numel()).view_as(p);
      if (p.grad().defined()) {
        p.mutable_grad().copy_(slice);
      } else {
        p.mutable_grad() = slice.clone();
      }
    }
  }
  impl_->armed = false;
  impl_->reset_pending();
}

int64_t GradientSync::buckets() const { return static_cast<int64_t>(impl_->buckets.size()); }

double GradientSync::exposed_wait_s() const { return impl_->exposed_wait_s; }

void all_reduce_gradients(torch::nn::Module& model, ProcessGroup& group, double scale, int64_t bucket_bytes) {
  GradientSync sync(model, group, bucket_bytes);
  sync.arm();
  sync.finish(scale);
}

}  // namespace ffnshape
