#include "layer_stats.h"

#include <cmath>

#include "ffnshape/compat.h"

namespace ffnshape {
namespace {

nn::TransformerBlockImpl& block_at(nn::TransformerLM& model, size_t layer) {
  return *model->blocks->ptr(layer)->as<nn::TransformerBlock>();
}

// The parameters of a layer's attention sub-layer (its norm included) and of its FFN stack.
std::vector<torch::Tensor> attention_parameters(nn::TransformerBlockImpl& block) {
  auto params = block.attn->parameters();
  for (const auto& p : block.attn_norm->parameters()) params.push_back(p);
  return params;
}

std::vector<torch::Tensor> ffn_parameters(nn::TransformerBlockImpl& block) { return block.ffn->parameters(); }

double rms(const torch::Tensor& t) { return t.to(torch::kFloat).square().mean().sqrt().item<double>(); }

// sqrt of the summed squares of every tensor, in double.
double joint_norm(const std::vector<torch::Tensor>& tensors) {
  double squares = 0;
  for (const auto& t : tensors) {
    if (t.defined()) squares += t.to(torch::kDouble).square().sum().item<double>();
  }
  return std::sqrt(squares);
}

std::vector<torch::Tensor> gradients(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params) grads.push_back(p.grad());
  return grads;
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone());
  return out;
}

double update_ratio(const std::vector<torch::Tensor>& before, const std::vector<torch::Tensor>& after) {
  std::vector<torch::Tensor> deltas;
  for (size_t i = 0; i < before.size(); ++i) deltas.push_back(after[i].detach() - before[i]);
  const double weight = joint_norm(before);
  return weight > 0 ? joint_norm(deltas) / weight : std::nan("");
}

}  // namespace

const std::vector<std::string>& LayerStats::names() {
  static const std::vector<std::string> all = {"resid_in_rms",   "resid_out_rms", "attn_out_rms",
                                               "ffn_out_rms",    "attn_grad_norm", "ffn_grad_norm",
                                               "attn_update_ratio", "ffn_update_ratio"};
  return all;
}

void measure_activations(nn::TransformerLM& model, const torch::Tensor& tokens, Precision precision,
                         LayerStats& stats) {
  torch::NoGradGuard no_grad;
  const auto device = model->tok_embeddings->weight.device();
  compat::AutocastGuard autocast(device.type(), torch::kBFloat16, precision == Precision::bf16);
  auto& in = stats.values["resid_in_rms"];
  auto& out = stats.values["resid_out_rms"];
  auto& attn = stats.values["attn_out_rms"];
  auto& ffn = stats.values["ffn_out_rms"];
  auto x = model->tok_embeddings(tokens.to(device));
  for (size_t layer = 0; layer < model->blocks->size(); ++layer) {
    auto& block = block_at(model, layer);
    const auto h = block.attend(x);
    const auto next = block.ffn(h);
    in.push_back(rms(x));
    attn.push_back(rms(h.to(torch::kFloat) - x.to(torch::kFloat)));
    ffn.push_back(rms(next.to(torch::kFloat) - h.to(torch::kFloat)));
    out.push_back(rms(next));
    x = next;
  }
}

void measure_gradients(nn::TransformerLM& model, LayerStats& stats) {
  auto& attn = stats.values["attn_grad_norm"];
  auto& ffn = stats.values["ffn_grad_norm"];
  for (size_t layer = 0; layer < model->blocks->size(); ++layer) {
    auto& block = block_at(model, layer);
    attn.push_back(joint_norm(gradients(attention_parameters(block))));
    ffn.push_back(joint_norm(gradients(ffn_parameters(block))));
  }
}

UpdateProbe::UpdateProbe(nn::TransformerLM& model) {
  for (size_t layer = 0; layer < model->blocks->size(); ++layer) {
    auto& block = block_at(model, layer);
    attn_before_.push_back(copies(attention_parameters(block)));
    ffn_before_.push_back(copies(ffn_parameters(block)));
  }
}

void UpdateProbe::finish(nn::TransformerLM& model, LayerStats& stats) const {
  auto& attn = stats.values["attn_update_ratio"];
  auto& ffn = stats.values["ffn_update_ratio"];
  for (size_t layer = 0; layer < attn_before_.size(); ++layer) {
    auto& block = block_at(model, layer);
    attn.push_back(update_ratio(attn_before_[layer], attention_parameters(block)));
    ffn.push_back(update_ratio(ffn_before_[layer], ffn_parameters(block)));
  }
}

bool layer_stats_due(int64_t step, int64_t every) { return every > 0 && (step == 1 || step % every == 0); }

}  // namespace ffnshape
