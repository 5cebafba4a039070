#include "ffnshape/train/optimizer.h"

namespace ffnshape {

std::unique_ptr<torch::optim::AdamW> make_optimizer(nn::TransformerLM& model, const OptimizerConfig& c) {
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
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(c.lr));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace ffnshape
