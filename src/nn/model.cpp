#include "ffnshape/nn/model.h"

#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <cstdint>

#include "ffnshape/compat.h"
#include "fused_ops.h"

namespace ffnshape::nn {
namespace {

// One block run without recording its graph; backward recomputes the block with the forward's
// autocast state and back-propagates through the recomputation.
struct RecomputedBlock : public torch::autograd::Function<RecomputedBlock> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               TransformerBlockImpl* block) {
    ctx->save_for_backward({x});
    ctx->saved_data["block"] = static_cast<int64_t>(reinterpret_cast<std::intptr_t>(block));
    const auto autocast = compat::active_autocast(x.device().type());
    ctx->saved_data["autocast"] = autocast.has_value();
    ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(autocast.value_or(torch::kBFloat16));
    return block->forward(x);  // grad mode is off inside Function::forward
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    auto* block = reinterpret_cast<TransformerBlockImpl*>(static_cast<std::intptr_t>(ctx->saved_data["block"].toInt()));
    const auto input = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    torch::Tensor output;
    {
      torch::AutoGradMode record(true);
      compat::AutocastGuard autocast(input.device().type(),
                                     static_cast<torch::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()),
                                     ctx->saved_data["autocast"].toBool());
      output = block->forward(input);
    }
    torch::autograd::backward({output}, {grad_outputs[0]});
    return {input.grad(), torch::Tensor()};
  }
};

}  // namespace

void truncated_normal_(torch::Tensor tensor, double std) {
  torch::NoGradGuard no_grad;
  // Sample a uniform over the CDF range of [-3, 3], map it back through the inverse normal CDF.
  const double lower = 0.5 * (1.0 + std::erf(-3.0 / std::sqrt(2.0)));
  const double upper = 0.5 * (1.0 + std::erf(3.0 / std::sqrt(2.0)));
  tensor.uniform_(2.0 * lower - 1.0, 2.0 * upper - 1.0);
  tensor.erfinv_();
  tensor.mul_(std * std::sqrt(2.0));
  tensor.clamp_(-3.0 * std, 3.0 * std);
}

TransformerLMImpl::TransformerLMImpl(const ModelConfig& config) : config_(config) {
  validate(config_);
  tok_embeddings = register_module("tok_embeddings", torch::nn::Embedding(config.vocab_size, config.d_model));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t layer = 0; layer < config.n_layers; ++layer) blocks->push_back(TransformerBlock(config, layer));
  norm = register_module("norm", RMSNorm(config.d_model, config.norm_eps));
  if (!config.tie_embeddings) {
    lm_head = register_module(
        "lm_head", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  }
  reset_parameters();
}

void TransformerLMImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  const double std = config_.init.std;
  const double out_std = config_.init.depth_scaled ? std / std::sqrt(2.0 * config_.n_layers) : std;
  auto draw = [&](torch::Tensor w, double s) {
    if (config_.init.dist == InitDist::truncated_normal) {
      truncated_normal_(w, s);
    } else {
      w.normal_(0.0, s);
    }
  };
  for (auto& item : named_parameters()) {
    const auto& name = item.key();
    auto& p = item.value();
    if (p.dim() == 1) {
      p.fill_(1.0);  // every 1-D parameter is a norm weight
    } else if (name.find("o_proj") != std::string::npos || name.find("down") != std::string::npos) {
      draw(p, out_std);
    } else {
      draw(p, std);
    }
  }
}

torch::Tensor TransformerLMImpl::forward(const torch::Tensor& idx) {
  auto x = tok_embeddings(idx);
  const bool recompute = activation_checkpointing_ && torch::GradMode::is_enabled();
  for (const auto& block : *blocks) {
    auto* layer = block->as<TransformerBlock>();
    x = recompute ? RecomputedBlock::apply(x, layer) : layer->forward(x);
  }
  x = norm(x);
  return lm_head ? lm_head(x) : torch::nn::functional::linear(x, tok_embeddings->weight);
}

torch::Tensor TransformerLMImpl::forward_cached(const torch::Tensor& idx, KvCache& cache, bool last_only) {
  const auto layers = static_cast<size_t>(blocks->size());
  cache.keys.resize(layers);
  cache.values.resize(layers);
  auto x = tok_embeddings(idx);
  for (size_t i = 0; i < layers; ++i) {
    x = blocks->ptr(i)->as<TransformerBlock>()->forward_cached(x, cache.keys[i], cache.values[i]);
  }
  if (last_only) x = x.narrow(1, x.size(1) - 1, 1);
  x = norm(x);
  return lm_head ? lm_head(x) : torch::nn::functional::linear(x, tok_embeddings->weight);
}

LMOutput TransformerLMImpl::forward_with_loss(const torch::Tensor& idx, const torch::Tensor& targets, int64_t ignore_index) {
  LMOutput out;
  out.logits = forward(idx);
  const auto logits = out.logits.view({-1, out.logits.size(-1)});  // the loss is fp32 for bf16 logits too
  const auto terms = cross_entropy_with_z_loss(logits, targets.reshape({-1}), ignore_index, config_.z_loss);
  out.ce_loss = terms.cross_entropy;
  out.z_loss = terms.z_loss;
  out.loss = out.ce_loss + out.z_loss;
  return out;
}

int64_t TransformerLMImpl::num_parameters() const {
  int64_t total = 0;
  for (const auto& p : parameters()) total += p.numel();
  return total;
}

}  // namespace ffnshape::nn
