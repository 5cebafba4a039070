#include "ffnshape/train/optimizer.h"

#include <map>

#include "ffnshape/compat.h"

namespace ffnshape {

torch::Tensor FusedAdamW::step(LossClosure closure) {
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode record(true);
    loss = closure();
  }
  torch::NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    TORCH_CHECK(!o.amsgrad(), "FusedAdamW does not implement amsgrad");
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    // The kernel reads each tensor's step count from a float32 scalar on its device; parameters of a
    // group share one scalar per distinct count (normally one, made once per step).
    std::map<int64_t, torch::Tensor> step_scalars;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state_[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*slot);
      state.step(state.step() + 1);
      auto& scalar = step_scalars[state.step()];
      if (!scalar.defined()) scalar = torch::full({}, static_cast<double>(state.step()), p.options().dtype(torch::kFloat));
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      steps.push_back(scalar);
    }
    if (params.empty()) continue;
    compat::fused_adamw_step(params, grads, exp_avgs, exp_avg_sqs, steps, o.lr(), std::get<0>(o.betas()),
                             std::get<1>(o.betas()), o.weight_decay(), o.eps());
  }
  return loss;
}

std::unique_ptr<torch::optim::AdamW> make_optimizer(nn::TransformerLM& model, const OptimizerConfig& c,
                                                    torch::Device device) {
  std::vector<torch::Tensor> decayed, undecayed;
  for (const auto& item : model->named_parameters()) {
    const bool is_norm = item.value().dim() == 1;
    const bool is_embedding = item.key().rfind("tok_embeddings", 0) == 0;
    const bool decay = (!is_norm || c.decay_norms) && (!is_embedding || c.decay_embeddings);
    (decay ? decayed : undecayed).push_back(item.value());
  }
  auto options = [&](double weight_decay) {
    return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(c.lr)
                                                            .betas({c.betas[0], c.betas[1]})
                                                            .eps(c.eps)
                                                            .weight_decay(weight_decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decayed, options(c.weight_decay));
  groups.emplace_back(undecayed, options(0.0));
  const bool fused = c.fused == FusedOptimizer::on || (c.fused == FusedOptimizer::automatic && device.is_cuda());
  if (fused) return std::make_unique<FusedAdamW>(groups, torch::optim::AdamWOptions(c.lr));
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(c.lr));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace ffnshape
