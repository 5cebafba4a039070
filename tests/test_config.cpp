// Strict configuration: defaults, errors that name the dotted key and line, --set overrides,
// and the resolved YAML round trip.
#include <gtest/gtest.h>

#include "ffnshape/config/run_config.h"
#include "ffnshape/config/yaml_reader.h"
#include "ffnshape/params/count.h"

using namespace ffnshape;

namespace {

const char* kBase = R"(model:
  family: llama
  vocab_size: 1000
  d_model: 64
  n_layers: 2
  n_heads: 4
  ffn:
    kind: conventional
    hidden: 128
)";

// The message of the ConfigError that loading `yaml` with `overrides` throws ("" if none).
std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    load_run_config_from_string(yaml, overrides, "test.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string with_line(const std::string& yaml, const std::string& after, const std::string& line) {
  std::string out = yaml;
  const auto pos = out.find(after);
  out.insert(pos + after.size(), line);
  return out;
}

}  // namespace

TEST(Config, LoadsAndDerivesSizes) {
  const auto c = load_run_config_from_string(kBase).model;
  EXPECT_EQ(c.d_model, 64);
  EXPECT_EQ(c.attn_head_dim(), 16);
  EXPECT_EQ(c.kv_heads(), 4);
  EXPECT_EQ(c.ffn_hidden(1), 128);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_TRUE(c.tie_embeddings);
}

TEST(Config, FamilyDefaultsForOlmo2) {
  auto c = load_run_config_from_string(kBase, {"model.family=olmo2"}).model;
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.tie_embeddings);
  EXPECT_DOUBLE_EQ(c.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(c.norm_eps, 1e-6);
  EXPECT_EQ(c.init.dist, InitDist::truncated_normal);
  EXPECT_DOUBLE_EQ(c.z_loss, 1e-5);
  // An explicit key still wins over the family default.
  c = load_run_config_from_string(kBase, {"model.family=olmo2", "model.qk_norm=false"}).model;
  EXPECT_FALSE(c.qk_norm);
}

TEST(Config, RatioRoundsToMultiple) {
  const auto c = load_run_config_from_string(kBase, {"model.ffn.hidden=null", "model.ffn.ratio=2.6667",
                                                     "model.ffn.multiple_of=32"})
                     .model;
  // 2.6667 * 64 = 170.67 -> nearest multiple of 32 is 160.
  EXPECT_EQ(c.ffn_uniform_hidden(), 160);
}

TEST(Config, UnknownKeyNamesPathAndLine) {
  const auto msg = error_of(with_line(kBase, "hidden: 128\n", "    hiden: 12\n"));
  EXPECT_NE(msg.find("test.yaml:10"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.ffn.hiden"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hidden"), std::string::npos) << msg;  // the hint lists the allowed keys
}

// Found by fuzz_run_config: a key that is itself a list escaped as yaml-cpp's BadConversion.
TEST(Config, KeyThatIsNotANameIsAConfigError) {
  const auto msg = error_of(with_line(kBase, "hidden: 128\n", "    [0.9, 0.95]: 1\n"));
  EXPECT_NE(msg.find("is not a key"), std::string::npos) << msg;
  EXPECT_NE(msg.find("this one is a list"), std::string::npos) << msg;
}

TEST(Config, UnknownTopLevelSection) {
  const auto msg = error_of(std::string(kBase) + "trainer:\n  steps: 3\n");
  EXPECT_NE(msg.find("trainer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test.yaml:10"), std::string::npos) << msg;
}

TEST(Config, WrongTypeNamesPathAndLine) {
  std::string yaml = kBase;
  yaml.replace(yaml.find("d_model: 64"), 11, "d_model: wide");
  const auto msg = error_of(yaml);
  EXPECT_NE(msg.find("test.yaml:4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.d_model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("integer"), std::string::npos) << msg;
  EXPECT_NE(error_of(kBase, {"model.ffn.widths=[1, x]"}).find("model.ffn.widths[1]"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"model.n_layers=[1, 2]"}).find("is a list"), std::string::npos);
}

TEST(Config, MalformedYamlGivesLine) {
  const auto msg = error_of("model:\n  d_model: [1, 2\n  n_layers: 3\n");
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test.yaml:"), std::string::npos) << msg;
}

TEST(Config, MissingFile) {
  try {
    load_run_config("/nonexistent/x.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos);
  }
}

TEST(Config, ImpossibleDimensions) {
  struct Case {
    std::vector<std::string> overrides;
    std::string path;
  };
  const std::vector<Case> cases = {
      {{"model.d_model=66"}, "model.head_dim"},                 // 66 % 4 != 0 with head_dim defaulted
      {{"model.n_kv_heads=3"}, "model.n_kv_heads"},             // 4 % 3 != 0
      {{"model.ffn.widths=[128]"}, "model.ffn.widths"},         // one width for two layers
      {{"model.ffn.kind=hourglass", "model.ffn.k=0"}, "model.ffn.k"},
      {{"model.ffn.k=2"}, "model.ffn.k"},                       // conventional means K = 1
      {{"model.d_model=-64"}, "model.d_model"},
      {{"model.n_layers=0"}, "model.n_layers"},
      {{"model.head_dim=15"}, "model.head_dim"},                // RoPE needs an even head_dim
      {{"model.ffn.ratio=2.0"}, "model.ffn.ratio"},             // both hidden and ratio
      {{"model.ffn.hidden=null"}, "model.ffn.hidden"},          // neither
      {{"model.ffn.multiple_of=48"}, "model.ffn.hidden"},       // 128 not a multiple of 48
      {{"model.norm_eps=0"}, "model.norm_eps"},
      {{"model.init.std=-1"}, "model.init.std"},
      {{"model.family=gpt2"}, "model.family"},
  };
  for (const auto& c : cases) {
    const auto msg = error_of(kBase, c.overrides);
    EXPECT_NE(msg.find(c.path + ":"), std::string::npos) << c.overrides[0] << " -> " << msg;
    EXPECT_NE(msg.find("fix:"), std::string::npos) << msg;
  }
  // A validation error for a key from the file points at that line.
  std::string yaml = kBase;
  yaml.replace(yaml.find("n_layers: 2"), 11, "n_layers: -2");
  EXPECT_NE(error_of(yaml).find("test.yaml:5: model.n_layers"), std::string::npos) << error_of(yaml);
}

TEST(Config, OverridesEveryKindOfValue) {
  const auto c = load_run_config_from_string(
                     kBase, {"model.d_model=128", "model.ffn.kind=hourglass", "model.ffn.k=3",
                             "model.ffn.widths=[32, 48]", "model.init.std=0.01", "model.rope_scaling.factor=4"})
                     .model;
  EXPECT_EQ(c.d_model, 128);
  EXPECT_EQ(c.ffn.k, 3);
  EXPECT_EQ(c.ffn_hidden(0), 32);
  EXPECT_EQ(c.ffn_hidden(1), 48);
  EXPECT_DOUBLE_EQ(c.init.std, 0.01);
  ASSERT_TRUE(c.rope_scaling.has_value());
  EXPECT_DOUBLE_EQ(c.rope_scaling->factor, 4.0);
}

TEST(Config, OverrideErrorsSayTheyCameFromSet) {
  auto msg = error_of(kBase, {"model.colour=blue"});
  EXPECT_NE(msg.find("--set model.colour"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown key"), std::string::npos) << msg;
  msg = error_of(kBase, {"model.ffn=3"});
  EXPECT_NE(msg.find("section"), std::string::npos) << msg;
  msg = error_of(kBase, {"model.d_model.x=3"});
  EXPECT_NE(msg.find("model.d_model"), std::string::npos) << msg;
  msg = error_of(kBase, {"no-equals-sign"});
  EXPECT_NE(msg.find("key=value"), std::string::npos) << msg;
  msg = error_of(kBase, {"model.n_heads=5"});  // 64 % 5 != 0: the message names the overridden value
  EXPECT_NE(msg.find("n_heads (5)"), std::string::npos) << msg;
}

TEST(Config, ResolvedYamlRoundTrips) {
  const auto original = load_run_config_from_string(
      kBase, {"model.family=olmo2", "model.ffn.kind=hourglass", "model.ffn.k=2", "model.ffn.widths=[16, 32]",
              "model.n_kv_heads=2", "model.rope_scaling.factor=8", "model.init.depth_scaled=true"});
  const auto yaml = to_yaml(original);
  const auto again = load_run_config_from_string(yaml).model;
  const auto& m = original.model;
  EXPECT_EQ(again.family, m.family);
  EXPECT_EQ(again.ffn.widths, m.ffn.widths);
  EXPECT_EQ(again.kv_heads(), m.kv_heads());
  EXPECT_EQ(again.attn_head_dim(), m.attn_head_dim());
  EXPECT_EQ(again.qk_norm, m.qk_norm);
  EXPECT_EQ(again.tie_embeddings, m.tie_embeddings);
  EXPECT_DOUBLE_EQ(again.rope_theta, m.rope_theta);
  EXPECT_DOUBLE_EQ(again.norm_eps, m.norm_eps);
  EXPECT_DOUBLE_EQ(again.z_loss, m.z_loss);
  EXPECT_TRUE(again.rope_scaling.has_value());
  EXPECT_TRUE(again.init.depth_scaled);
  EXPECT_EQ(count_parameters(again).total(), count_parameters(m).total());
  // Resolving again is a fixed point.
  EXPECT_EQ(to_yaml(RunConfig{again}), yaml);
}
