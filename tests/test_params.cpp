// Analytic parameter and FLOP accounting against published totals and hand-derived formulas.
#include <gtest/gtest.h>

#include "ffnshape/config/run_config.h"
#include "ffnshape/params/count.h"

using namespace ffnshape;

namespace {

ModelConfig load(const std::string& relative) {
  return load_run_config(std::string(FFNSHAPE_SOURCE_DIR) + "/" + relative).model;
}

}  // namespace

// Totals published with each model (model cards / Hugging Face parameter counts).
TEST(Params, ReproducesPublishedTotals) {
  const std::vector<std::pair<std::string, int64_t>> published = {
      {"configs/reference/llama-2-7b.yaml", 6'738'415'616},
      {"configs/reference/llama-2-13b.yaml", 13'015'864'320},
      {"configs/reference/llama-3-8b.yaml", 8'030'261'248},
      {"configs/reference/llama-3.2-1b.yaml", 1'235'814'400},
      {"configs/reference/mistral-7b.yaml", 7'241'732'096},
      {"configs/reference/tinyllama-1.1b.yaml", 1'100'048'384},
      {"configs/reference/smollm-135m.yaml", 134'515'008},
      {"configs/reference/olmo-2-1b.yaml", 1'484'916'736},
      {"configs/reference/olmo-2-7b.yaml", 7'298'617'344},
  };
  for (const auto& [path, total] : published) EXPECT_EQ(count_parameters(load(path)).total(), total) << path;
}

TEST(Params, HandDerivedBreakdown) {
  // Llama-2-7B: every category written out from the architecture.
  const auto c = count_parameters(load("configs/reference/llama-2-7b.yaml"));
  EXPECT_EQ(c.embedding, 32000LL * 4096);
  EXPECT_EQ(c.head, 32000LL * 4096);
  EXPECT_EQ(c.attention, 32LL * 4 * 4096 * 4096);
  EXPECT_EQ(c.ffn, 32LL * 3 * 4096 * 11008);
  EXPECT_EQ(c.norm, 32LL * 2 * 4096 + 4096);
  EXPECT_EQ(c.non_embedding(), c.total() - c.embedding - c.head);
  EXPECT_NEAR(c.attention_share() + c.ffn_share() + static_cast<double>(c.norm) / c.non_embedding(), 1.0, 1e-12);
}

TEST(Params, HourglassSubBlockCountIsThreeDdhPlusD) {
  ModelConfig m;
  m.vocab_size = 100;
  m.d_model = 2496;
  m.n_layers = 12;
  m.n_heads = 16;
  m.head_dim = 96;
  m.ffn.kind = FfnKind::hourglass;
  m.ffn.k = 4;
  m.ffn.hidden = 2016;
  const auto c = count_parameters(m);
  EXPECT_EQ(c.ffn + 12 * 4 * 2496, 12 * 4 * (3LL * 2496 * 2016 + 2496));  // PAPERS.md: 3 d d_h + d per sub-block
  EXPECT_EQ(c.attention, 12LL * 4 * 2496 * 1536);
}

TEST(Params, PaperConfigsCarryTheirSizeLabels) {
  // The hourglass paper labels sizes by non-embedding parameters.
  const std::vector<std::pair<std::string, double>> labels = {
      {"configs/paper/hourglass-906m-conventional.yaml", 906e6},
      {"configs/paper/hourglass-906m-hourglass.yaml", 906e6},
      {"configs/paper/hourglass-113m-conventional.yaml", 113e6},
  };
  for (const auto& [path, label] : labels) {
    const double n = static_cast<double>(count_parameters(load(path)).non_embedding());
    EXPECT_NEAR(n / label, 1.0, 0.01) << path << " has " << n;
  }
}

TEST(Params, PerLayerWidthsAreSummed) {
  ModelConfig m;
  m.vocab_size = 10;
  m.d_model = 8;
  m.n_layers = 3;
  m.n_heads = 2;
  m.ffn.widths = {4, 8, 12};
  EXPECT_EQ(count_parameters(m).ffn, 3 * 8 * (4 + 8 + 12));
}

TEST(Flops, PalmFormula) {
  ModelConfig m;
  m.vocab_size = 1000;
  m.d_model = 64;
  m.n_layers = 2;
  m.n_heads = 4;
  m.ffn.hidden = 256;
  const auto f = count_flops(m, 128);
  const double matmul = 2 * (4.0 * 64 * 64 + 3.0 * 64 * 256) + 1000.0 * 64;  // head counted though tied
  EXPECT_DOUBLE_EQ(f.forward_per_token, 2 * matmul + 4.0 * 2 * 128 * 64);
  EXPECT_DOUBLE_EQ(f.training_per_token, 3 * f.forward_per_token);
}
