#include "ranks.h"

#include <chrono>
#include <string>
#include <vector>

namespace ffnshape {

namespace {

torch::Device rank_device(const DistributedEnv& env, torch::Device requested) {
  if (!requested.is_cuda() || requested.has_index() || !env.distributed()) return requested;
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
}

}  // namespace

Ranks::Ranks(const DistributedEnv& env, const TrainConfig& config, torch::Device requested, double join_timeout_s,
             const std::function<bool()>& cancelled)
    : env_(env),
      device_(rank_device(env, requested)),
      bucket_bytes_(static_cast<int64_t>(config.bucket_mb * 1e6)), zero_(config.zero == 1),
      overlap_(config.overlap_comm) {
  if (!env.distributed()) return;
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(config.collective_timeout_s * 1000));
  const auto join_timeout = std::chrono::milliseconds(static_cast<int64_t>(join_timeout_s * 1000));
  group_ = std::make_unique<ProcessGroup>(env, timeout, device_, join_timeout, cancelled);
}

void Ranks::attach(torch::nn::Module& model, std::unique_ptr<torch::optim::AdamW>& optimizer) {
  if (!group_) return;
  broadcast_parameters(model, *group_);
  sync_ = std::make_unique<GradientSync>(model, *group_, bucket_bytes_, zero_, overlap_);
  if (zero_) {
    auto sharded = std::make_unique<ShardedAdamW>(*optimizer, *sync_);
    sharded_ = sharded.get();
    optimizer = std::move(sharded);
  }
}

double Ranks::clip_gradients(torch::nn::Module& model, double max_norm) {
  if (sharded_) return sharded_->clip_grad_norm(max_norm);
  return torch::nn::utils::clip_grad_norm_(model.parameters(), max_norm);
}

void Ranks::before_save() {
  if (sharded_) sharded_->gather_state();
}

void Ranks::after_save() {
  if (sharded_) sharded_->release_state();
}

double Ranks::sum(double value) { return group_ ? group_->sum(value) : value; }

std::vector<double> Ranks::sum(std::vector<double> values) {
  if (!group_) return values;
  std::vector<torch::Tensor> packed{torch::tensor(values, torch::kDouble).to(group_->device())};
  group_->all_reduce_sum(packed);
  const auto summed_tensor = packed[0].cpu();
  const auto* summed = summed_tensor.data_ptr<double>();
  return {summed, summed + values.size()};
}

void Ranks::check_same_step(int64_t step) {
  if (!group_) return;
  std::vector<torch::Tensor> root_step{torch::full({1}, step, torch::TensorOptions(torch::kLong).device(group_->device()))};
  group_->broadcast(root_step, 0);
  const auto expected = root_step[0].item<int64_t>();
  if (expected != step) {
    throw DistributedError("rank " + std::to_string(rank()) + " resumes at step " + std::to_string(step) +
                           " but rank 0 at step " + std::to_string(expected) +
                           "\n  fix: put the run directory on a filesystem every node shares");
  }
}

void Ranks::share_root_start(bool root_failed) {
  if (!group_) return;
  std::vector<torch::Tensor> flag{
      torch::full({1}, root_failed ? 1 : 0, torch::TensorOptions(torch::kLong).device(group_->device()))};
  group_->broadcast(flag, 0);
  if (!is_root() && flag[0].item<int64_t>() != 0) {
    throw DistributedError("rank 0 could not start this run (its log says why: e.g. another process is training "
                           "into the run directory); nothing was written\n  fix: see rank 0's message");
  }
}

void Ranks::before_last_backward() {
  if (sync_) sync_->arm();
}

void Ranks::finish_gradients() {
  if (sync_) sync_->finish();
}

double Ranks::exposed_wait_s() const { return sync_ ? sync_->exposed_wait_s() : 0.0; }

}  // namespace ffnshape
