#include "ffnshape/train/data_parallel.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace ffnshape {

namespace {

// Broadcasts tensors of one dtype from rank 0 as one flat message and copies the result back.
void broadcast_flat(const std::vector<torch::Tensor>& tensors, ProcessGroup& group) {
  std::vector<torch::Tensor> pieces;
  for (const auto& t : tensors) pieces.push_back(t.reshape(-1));
  std::vector<torch::Tensor> flat{torch::cat(pieces)};
  group.broadcast(flat, 0);
  int64_t offset = 0;
  for (const auto& t : tensors) {
    t.copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

}  // namespace

void broadcast_parameters(torch::nn::Module& model, ProcessGroup& group) {
  torch::NoGradGuard no_grad;
  // Messages of up to 256 MB per dtype (as DDP's initial sync), not one per tensor.
  constexpr int64_t kMessageBytes = int64_t{256} << 20;
  std::vector<torch::Tensor> tensors;
  for (auto& p : model.parameters()) tensors.push_back(p.data());
  for (auto& b : model.buffers()) tensors.push_back(b.data());
  std::map<torch::ScalarType, std::vector<torch::Tensor>> pending;
  std::map<torch::ScalarType, int64_t> pending_bytes;
  for (auto& t : tensors) {
    const auto type = t.scalar_type();
    auto& list = pending[type];
    if (!list.empty() && pending_bytes[type] + t.nbytes() > kMessageBytes) {
      broadcast_flat(list, group);
      list.clear();
      pending_bytes[type] = 0;
    }
    list.push_back(t);
    pending_bytes[type] += static_cast<int64_t>(t.nbytes());
  }
  for (auto& [type, list] : pending) {
    if (!list.empty()) broadcast_flat(list, group);
  }
}

namespace {

// Gradients of several parameters reduced as one flat tensor.
struct Bucket {
  std::vector<torch::Tensor> params;
  std::vector<int64_t> offsets;       // of each parameter in `flat`
  std::vector<torch::Tensor> flat;    // one tensor (padded to a multiple of the world size when
                                      // sharded); a vector because the collective takes one
  torch::Tensor shard;                // sharded: this rank's slice of the sum
  int64_t pending = 0;                // gradients of the armed backward still to come
  PendingCollective work;
};

}  // namespace

struct GradientSync::Impl {
  ProcessGroup& group;
  bool shard = false;
  bool overlap = true;
  std::vector<Bucket> buckets;
  std::vector<char> ready;  // per parameter, in the armed backward
  // Whatever handle grad_accumulator() returns (its pointer type differs between LibTorch versions).
  std::vector<decltype(torch::autograd::impl::grad_accumulator(std::declval<const torch::Tensor&>()))> accumulators;
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
    const int64_t used = bucket.offsets.back() + bucket.params.back().numel();
    flat.narrow(0, used, flat.numel() - used).zero_();  // the padding of a sharded bucket
    bucket.work = shard ? group.reduce_scatter_sum_async(bucket.shard, flat) : group.all_reduce_sum_async(bucket.flat);
  }

  // Buckets start strictly in order: every rank must issue the same collectives in the same order.
  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].pending == 0) launch(buckets[next_launch++]);
  }

  void on_gradient(size_t param, size_t bucket) {
    if (!armed || !overlap || ready[param]) return;
    ready[param] = 1;
    if (--buckets[bucket].pending == 0) launch_ready();
  }
};

GradientSync::GradientSync(torch::nn::Module& model, ProcessGroup& group, int64_t bucket_bytes, bool shard,
                           bool overlap)
    : impl_(std::make_unique<Impl>(group)) {
  impl_->shard = shard;
  impl_->overlap = overlap;
  auto params = model.parameters();
  int64_t bytes = 0;
  // The first bucket is small (1 MB, as DistributedDataParallel's), so communication starts early.
  auto cap = [&] { return impl_->buckets.size() <= 1 ? std::min<int64_t>(bucket_bytes, 1 << 20) : bucket_bytes; };
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    auto& p = *it;
    if (!p.requires_grad()) continue;
    const int64_t size = p.numel() * static_cast<int64_t>(p.element_size());
    auto* last = impl_->buckets.empty() ? nullptr : &impl_->buckets.back();
    if (!last || last->params.front().scalar_type() != p.scalar_type() ||
        last->params.front().device() != p.device() || bytes + size > cap()) {
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
    const int64_t world = shard ? group.world_size() : 1;
    const int64_t slice = (elements + world - 1) / world;
    bucket.flat.push_back(torch::empty({slice * world}, bucket.params.front().options()));
    if (shard) bucket.shard = torch::empty({slice}, bucket.params.front().options());
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
    if (impl_->shard) {
      if (scale != 1.0) bucket.shard.mul_(scale);
      continue;
    }
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

// --- ShardedAdamW --------------------------------------------------------------------------------

namespace {

// Where part of a parameter lies in this rank's slice of its bucket.
struct Piece {
  torch::Tensor param;
  int64_t slice_offset = 0, param_offset = 0, length = 0;
  double weight_decay = 0;
};

// This rank's slice of one bucket: its weights (copied in for each step), moments and pieces.
struct Slice {
  Bucket* bucket = nullptr;
  torch::Tensor weights, exp_avg, exp_avg_sq, gathered;  // gathered: the whole bucket, padded
  std::vector<Piece> pieces;
};

const torch::optim::AdamWOptions& adamw_options(const torch::optim::OptimizerParamGroup& group) {
  return static_cast<const torch::optim::AdamWOptions&>(group.options());
}

}  // namespace

struct ShardedAdamW::Impl {
  ProcessGroup* group = nullptr;
  std::vector<Slice> slices;
  int64_t step = 0;
};

ShardedAdamW::ShardedAdamW(torch::optim::AdamW& like, GradientSync& sync)
    : torch::optim::AdamW(like.param_groups(), static_cast<const torch::optim::AdamWOptions&>(like.defaults())),
      impl_(std::make_unique<Impl>()) {
  auto& s = *sync.impl_;
  if (!s.shard) throw std::logic_error("ShardedAdamW needs a sharding GradientSync");
  impl_->group = &s.group;
  std::unordered_map<const void*, double> decay;
  for (const auto& group : param_groups()) {
    for (const auto& p : group.params()) decay[p.unsafeGetTensorImpl()] = adamw_options(group).weight_decay();
  }
  const int64_t rank = s.group.rank();
  for (auto& bucket : s.buckets) {
    Slice slice;
    slice.bucket = &bucket;
    const int64_t size = bucket.shard.numel(), begin = rank * size;
    for (size_t i = 0; i < bucket.params.size(); ++i) {
      const auto& p = bucket.params[i];
      const int64_t lo = std::max(begin, bucket.offsets[i]), hi = std::min(begin + size, bucket.offsets[i] + p.numel());
      if (lo >= hi) continue;
      slice.pieces.push_back({p, lo - begin, lo - bucket.offsets[i], hi - lo, decay.at(p.unsafeGetTensorImpl())});
    }
    slice.weights = torch::zeros({size}, bucket.shard.options());
    slice.exp_avg = torch::zeros_like(slice.weights);
    slice.exp_avg_sq = torch::zeros_like(slice.weights);
    slice.gathered = torch::empty_like(bucket.flat.front());
    impl_->slices.push_back(std::move(slice));
  }
  // Moments of a loaded checkpoint: keep this rank's slices of them.
  torch::NoGradGuard no_grad;
  for (auto& slice : impl_->slices) {
    for (const auto& piece : slice.pieces) {
      const auto found = like.state().find(piece.param.unsafeGetTensorImpl());
      if (found == like.state().end()) continue;
      const auto& state = static_cast<const torch::optim::AdamWParamState&>(*found->second);
      impl_->step = state.step();
      slice.exp_avg.narrow(0, piece.slice_offset, piece.length)
          .copy_(state.exp_avg().reshape(-1).narrow(0, piece.param_offset, piece.length));
      slice.exp_avg_sq.narrow(0, piece.slice_offset, piece.length)
          .copy_(state.exp_avg_sq().reshape(-1).narrow(0, piece.param_offset, piece.length));
    }
  }
}

ShardedAdamW::~ShardedAdamW() = default;

torch::Tensor ShardedAdamW::step(LossClosure closure) {
  TORCH_CHECK(!closure, "ShardedAdamW::step takes no closure");
  const auto& o = adamw_options(param_groups().front());
  for (const auto& group : param_groups()) {
    const auto& g = adamw_options(group);
    TORCH_CHECK(g.lr() == o.lr() && g.betas() == o.betas() && g.eps() == o.eps() && !g.amsgrad(),
                "ShardedAdamW: parameter groups may differ in weight decay only");
  }
  torch::NoGradGuard no_grad;
  const auto [beta1, beta2] = o.betas();
  const int64_t step = ++impl_->step;
  const double bias_correction1 = 1 - std::pow(beta1, step), bias_correction2 = 1 - std::pow(beta2, step);
  for (auto& slice : impl_->slices) {
    const auto& grad = slice.bucket->shard;
    // torch::optim::AdamW's update, on the slice: decay, moments, then the bias-corrected step.
    for (const auto& piece : slice.pieces) {
      auto weights = slice.weights.narrow(0, piece.slice_offset, piece.length);
      weights.copy_(piece.param.detach().reshape(-1).narrow(0, piece.param_offset, piece.length));
      weights.mul_(1 - o.lr() * piece.weight_decay);
    }
    slice.exp_avg.mul_(beta1).add_(grad, 1 - beta1);
    slice.exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
    const auto denom = (slice.exp_avg_sq.sqrt() / std::sqrt(bias_correction2)).add_(o.eps());
    slice.weights.addcdiv_(slice.exp_avg, denom, -o.lr() / bias_correction1);
    impl_->group->all_gather(slice.gathered, slice.weights);
    auto& bucket = *slice.bucket;
    for (size_t i = 0; i < bucket.params.size(); ++i) {
      auto& p = bucket.params[i];
      p.detach().copy_(slice.gathered.narrow(0, bucket.offsets[i], p.numel()).view_as(p));
    }
  }
  return {};
}

double ShardedAdamW::clip_grad_norm(double max_norm) {
  torch::NoGradGuard no_grad;
  double squares = 0;
  for (const auto& slice : impl_->slices) squares += slice.bucket->shard.to(torch::kDouble).pow(2).sum().item<double>();
  const double norm = std::sqrt(impl_->group->sum(squares));
  const double coefficient = max_norm / (norm + 1e-6);
  if (coefficient < 1) {
    for (auto& slice : impl_->slices) slice.bucket->shard.mul_(coefficient);
  }
  return norm;
}

void ShardedAdamW::gather_state() {
  torch::NoGradGuard no_grad;
  state_.clear();
  for (auto& slice : impl_->slices) {
    auto exp_avg = torch::empty_like(slice.gathered), exp_avg_sq = torch::empty_like(slice.gathered);
    impl_->group->all_gather(exp_avg, slice.exp_avg);
    impl_->group->all_gather(exp_avg_sq, slice.exp_avg_sq);
    const auto& bucket = *slice.bucket;
    for (size_t i = 0; i < bucket.params.size(); ++i) {
      const auto& p = bucket.params[i];
      auto state = std::make_unique<torch::optim::AdamWParamState>();
      state->step(impl_->step);
      state->exp_avg(exp_avg.narrow(0, bucket.offsets[i], p.numel()).view_as(p).clone());
      state->exp_avg_sq(exp_avg_sq.narrow(0, bucket.offsets[i], p.numel()).view_as(p).clone());
      state_[p.unsafeGetTensorImpl()] = std::move(state);
    }
  }
}

void ShardedAdamW::release_state() { state_.clear(); }

void all_reduce_gradients(torch::nn::Module& model, ProcessGroup& group, double scale, int64_t bucket_bytes) {
  GradientSync sync(model, group, bucket_bytes);
  sync.arm();
  sync.finish(scale);
}

}  // namespace ffnshape
