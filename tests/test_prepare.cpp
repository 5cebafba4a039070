// Text to shards: document split, token counts, shard contents and meta.json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "ffnshape/train/data_error.h"
#include "ffnshape/train/loader.h"
#include "ffnshape/data/prepare.h"
#include "ffnshape/train/tokenizer.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace ffnshape;

namespace {

struct Corpus {
  ffnshape::testing::TempDir dir{"ffnshape_prepare"};
  fs::path root = dir.path();
  Corpus() {
    fs::create_directories(root / "text");
    const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away", "home"};
    std::mt19937 gen(7);
    for (int d = 0; d < 20; ++d) {
      std::ofstream out(root / "text" / ("doc" + std::to_string(100 + d) + ".txt"));
      for (int w = 0; w < 300; ++w) out << words[gen() % 12] << (w % 15 == 14 ? ".\n" : " ");
    }
    std::ofstream(root / "text" / ".hidden.txt") << "not a document";
  }
};

PrepareOptions options_for(const Corpus& c, const std::string& out) {
  PrepareOptions o;
  o.inputs = {(c.root / "text").string()};
  o.out_dir = (c.root / out).string();
  o.vocab_size = 300;
  o.val_fraction = 0.2;
  o.seed = 1;
  o.threads = 2;
  o.quiet = true;
  return o;
}

}  // namespace

TEST(Prepare, SplitsByDocumentAndCountsEveryToken) {
  Corpus corpus;
  const auto r = prepare_data(options_for(corpus, "out"));
  EXPECT_EQ(r.train_documents, 16);
  EXPECT_EQ(r.val_documents, 4);
  const auto tokenizer = Tokenizer::load(r.tokenizer_path);
  EXPECT_EQ(tokenizer.vocab_size(), 300);

  std::ifstream meta_file(corpus.root / "out" / "meta.json");
  const auto meta = nlohmann::json::parse(meta_file);
  // The validation documents, encoded independently, account for every validation token.
  int64_t expected_val = 0;
  for (const auto& doc : meta.at("val_documents")) {
    std::ifstream in(doc.get<std::string>());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    expected_val += static_cast<int64_t>(tokenizer.encode(text).size()) + 1;  // + end of document
  }
  EXPECT_EQ(r.val_tokens, expected_val);
  EXPECT_EQ(meta.at("tokens").at("val").get<int64_t>(), expected_val);

  Shard train((corpus.root / "out" / "train_000000.bin").string());
  Shard val((corpus.root / "out" / "val_000000.bin").string());
  EXPECT_EQ(train.size(), r.train_tokens);
  EXPECT_EQ(val.size(), r.val_tokens);
  int64_t eos = 0;
  for (int64_t i = 0; i < train.size(); ++i) eos += train.token(i) == static_cast<uint32_t>(tokenizer.eos_id());
  EXPECT_EQ(eos, 16);  // one end-of-document per training document
  EXPECT_EQ(train.token(train.size() - 1), static_cast<uint32_t>(tokenizer.eos_id()));
}

TEST(Prepare, IsDeterministicAndReusesAGivenTokenizer) {
  Corpus corpus;
  const auto a = prepare_data(options_for(corpus, "a"));
  auto options = options_for(corpus, "b");
  options.tokenizer = a.tokenizer_path;
  const auto b = prepare_data(options);
  EXPECT_EQ(a.train_tokens, b.train_tokens);
  EXPECT_EQ(a.val_tokens, b.val_tokens);
  std::ifstream ma(corpus.root / "a" / "meta.json"), mb(corpus.root / "b" / "meta.json");
  EXPECT_EQ(nlohmann::json::parse(ma).at("shards"), nlohmann::json::parse(mb).at("shards"));  // same checksums
}

TEST(Prepare, SmallShardsAndNoValidation) {
  Corpus corpus;
  auto options = options_for(corpus, "small");
  options.val_fraction = 0;
  options.shard_tokens = 1000;
  const auto r = prepare_data(options);
  EXPECT_EQ(r.val_documents, 0);
  EXPECT_GT(r.shards.size(), 2u);
  int64_t total = 0;
  for (const auto& path : r.shards) total += Shard(path).size();
  EXPECT_EQ(total, r.train_tokens);
}

TEST(Prepare, RejectsBadInput) {
  Corpus corpus;
  auto options = options_for(corpus, "bad");
  options.inputs = {(corpus.root / "missing").string()};
  EXPECT_THROW(prepare_data(options), DataError);
  options = options_for(corpus, "bad");
  options.val_fraction = 1.5;
  EXPECT_ANY_THROW(prepare_data(options));
}
