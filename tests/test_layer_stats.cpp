// Per-layer statistics (log.layer_stats_every) against values worked out by hand on a model whose
// weights are set to identities and zeros, against torch's own total gradient norm, and against
// AdamW's first-step formula.
#include <gtest/gtest.h>

#include <cmath>

#include "../src/train/layer_stats.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/nn/model.h"

using namespace ffnshape;

namespace {

// d_model 4, one head, FFN hidden 4: small enough to set every weight by hand.
ModelConfig four_wide() {
  auto c = ModelConfig::defaults_for(Family::llama);
  c.vocab_size = 8;
  c.d_model = 4;
  c.n_layers = 2;
  c.n_heads = 1;
  c.n_kv_heads = 1;
  c.max_seq_len = 8;
  c.ffn.hidden = 4;
  c.norm_eps = 1e-12;  // so that RMSNorm maps a constant row to ones, to 1e-12
  return c;
}

ModelConfig small() {
  auto c = ModelConfig::defaults_for(Family::llama);
  c.vocab_size = 97;
  c.d_model = 32;
  c.n_layers = 3;
  c.n_heads = 4;
  c.max_seq_len = 16;
  c.ffn.hidden = 48;
  c.tie_embeddings = false;  // a head of its own, outside the blocks
  return c;
}

nn::TransformerBlockImpl& block(nn::TransformerLM& model, size_t layer) {
  return *model->blocks->ptr(layer)->as<nn::TransformerBlock>();
}

nn::SwiGLUSubBlockImpl& sub_block(nn::TransformerLM& model, size_t layer) {
  return *block(model, layer).ffn->sub_blocks->ptr(0)->as<nn::SwiGLUSubBlock>();
}

// Layer 0: attention output 0.5 * RMSNorm(x) (value identity, output 0.5 identity; one position, so
// the softmax is 1), FFN gate, up and down identities. Layer 1: both outputs zero. Token t embeds to
// the constant row t + 1.
nn::TransformerLM hand_set_model() {
  nn::TransformerLM model(four_wide());
  torch::NoGradGuard no_grad;
  const auto eye = torch::eye(4);
  for (int64_t t = 0; t < 8; ++t) model->tok_embeddings->weight[t].fill_(static_cast<double>(t + 1));
  for (size_t layer = 0; layer < 2; ++layer) {
    auto& attn = *block(model, layer).attn;
    attn.v_proj->weight.copy_(eye);
    attn.o_proj->weight.copy_(layer == 0 ? 0.5 * eye : torch::zeros({4, 4}));
    auto& ffn = sub_block(model, layer);
    ffn.gate->weight.copy_(eye);
    ffn.up->weight.copy_(eye);
    ffn.down->weight.copy_(layer == 0 ? eye : torch::zeros({4, 4}));
  }
  return model;
}

}  // namespace

TEST(LayerStats, ActivationsMatchAHandComputation) {
  auto model = hand_set_model();
  LayerStats stats;
  // Two sequences of one token: rows of ones and of twos.
  measure_activations(model, torch::tensor({0, 1}, torch::kLong).view({2, 1}), Precision::fp32, stats);
  // Row c (c = 1, 2): RMSNorm gives ones, so h = c + 0.5 and the FFN adds silu(1) * 1 to every entry.
  const double silu1 = 1.0 / (1.0 + std::exp(-1.0));
  const double out1 = 1.5 + silu1, out2 = 2.5 + silu1;
  const double resid_out = std::sqrt((out1 * out1 + out2 * out2) / 2);
  const auto& v = stats.values;
  EXPECT_NEAR(v.at("resid_in_rms")[0], std::sqrt(2.5), 1e-6);
  EXPECT_NEAR(v.at("attn_out_rms")[0], 0.5, 1e-6);
  EXPECT_NEAR(v.at("ffn_out_rms")[0], silu1, 1e-6);
  EXPECT_NEAR(v.at("resid_out_rms")[0], resid_out, 1e-6);
  // Layer 1 adds nothing.
  EXPECT_NEAR(v.at("resid_in_rms")[1], resid_out, 1e-6);
  EXPECT_NEAR(v.at("attn_out_rms")[1], 0.0, 1e-7);
  EXPECT_NEAR(v.at("ffn_out_rms")[1], 0.0, 1e-7);
  EXPECT_NEAR(v.at("resid_out_rms")[1], resid_out, 1e-6);
}

TEST(LayerStats, GradientNormsAddUpToTorchsTotalNorm) {
  torch::manual_seed(3);
  nn::TransformerLM model(small());
  const auto tokens = torch::randint(97, {2, 9}, torch::kLong);
  model->forward_with_loss(tokens.narrow(1, 0, 8), tokens.narrow(1, 1, 8)).loss.backward();
  LayerStats stats;
  measure_gradients(model, stats);
  // The layers' attention and FFN parts, plus the parameters outside the blocks, make up the whole.
  double squares = 0;
  for (size_t layer = 0; layer < 3; ++layer) {
    const double attn = stats.values.at("attn_grad_norm")[layer], ffn = stats.values.at("ffn_grad_norm")[layer];
    EXPECT_GT(attn, 0);
    EXPECT_GT(ffn, 0);
    squares += attn * attn + ffn * ffn;
  }
  std::vector<torch::Tensor> outside = model->tok_embeddings->parameters();
  for (const auto& p : model->norm->parameters()) outside.push_back(p);
  if (model->lm_head) outside.push_back(model->lm_head->weight);  // null with tied embeddings
  for (const auto& p : outside) squares += p.grad().to(torch::kDouble).square().sum().item<double>();
  const double total = torch::nn::utils::clip_grad_norm_(model->parameters(), 1e30);
  EXPECT_NEAR(std::sqrt(squares), total, 1e-5 * total);
}

TEST(LayerStats, UpdateRatioIsAdamWsFirstStepOverTheWeights) {
  torch::manual_seed(4);
  nn::TransformerLM model(small());
  const auto tokens = torch::randint(97, {2, 9}, torch::kLong);
  model->forward_with_loss(tokens.narrow(1, 0, 8), tokens.narrow(1, 1, 8)).loss.backward();
  const double lr = 1e-2, eps = 1e-8;
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(lr).eps(eps).weight_decay(0));
  // AdamW's first step moves each weight by lr * g / (|g| + eps) (bias-corrected moments g and g^2).
  auto expected = [&](const std::vector<torch::Tensor>& params) {
    double update = 0, weight = 0;
    for (const auto& p : params) {
      const auto g = p.grad().to(torch::kDouble);
      update += (lr * g / (g.abs() + eps)).square().sum().item<double>();
      weight += p.to(torch::kDouble).square().sum().item<double>();
    }
    return std::sqrt(update / weight);
  };
  std::vector<double> attn_expected, ffn_expected;
  for (size_t layer = 0; layer < 3; ++layer) {
    auto attn_params = block(model, layer).attn->parameters();
    for (const auto& p : block(model, layer).attn_norm->parameters()) attn_params.push_back(p);
    attn_expected.push_back(expected(attn_params));
    ffn_expected.push_back(expected(block(model, layer).ffn->parameters()));
  }
  UpdateProbe probe(model);
  optimizer.step();
  LayerStats stats;
  probe.finish(model, stats);
  for (size_t layer = 0; layer < 3; ++layer) {
    EXPECT_NEAR(stats.values.at("attn_update_ratio")[layer], attn_expected[layer], 1e-4 * attn_expected[layer]);
    EXPECT_NEAR(stats.values.at("ffn_update_ratio")[layer], ffn_expected[layer], 1e-4 * ffn_expected[layer]);
  }
}

TEST(LayerStats, DueAtTheFirstStepAndEveryNSteps) {
  EXPECT_FALSE(layer_stats_due(1, 0));
  EXPECT_FALSE(layer_stats_due(10, 0));
  EXPECT_TRUE(layer_stats_due(1, 5));
  EXPECT_FALSE(layer_stats_due(4, 5));
  EXPECT_TRUE(layer_stats_due(5, 5));
  EXPECT_TRUE(layer_stats_due(10, 5));
  EXPECT_TRUE(layer_stats_due(3, 1));
}

TEST(LayerStats, NamesEveryStatisticTheMeasurementsFill) {
  auto model = hand_set_model();
  model->forward_with_loss(torch::zeros({1, 2}, torch::kLong), torch::zeros({1, 2}, torch::kLong)).loss.backward();
  LayerStats stats;
  measure_activations(model, torch::zeros({1, 2}, torch::kLong), Precision::fp32, stats);
  measure_gradients(model, stats);
  torch::optim::SGD sgd(model->parameters(), 0.1);
  UpdateProbe probe(model);
  sgd.step();
  probe.finish(model, stats);
  std::vector<std::string> filled;
  for (const auto& [name, per_layer] : stats.values) {
    filled.push_back(name);
    EXPECT_EQ(per_layer.size(), 2u) << name;
  }
  auto names = LayerStats::names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(filled, names);
}

TEST(LayerStats, ConfigKeyIsOffByDefaultRefusesNegativesAndRoundTrips) {
  const std::string yaml = R"(model: {vocab_size: 64, d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 256, ffn: {hidden: 64}}
data: {train: "t_*.bin"}
)";
  EXPECT_EQ(load_run_config_from_string(yaml).log.layer_stats_every, 0);
  const auto config = load_run_config_from_string(yaml, {"log.layer_stats_every=25"});
  EXPECT_EQ(config.log.layer_stats_every, 25);
  EXPECT_EQ(load_run_config_from_string(to_yaml(config)).log.layer_stats_every, 25);  // a resume reads it back
  try {
    load_run_config_from_string(yaml, {"log.layer_stats_every=-1"});
    FAIL() << "a negative interval was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("log.layer_stats_every"), std::string::npos) << e.what();
  }
}
