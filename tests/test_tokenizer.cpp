#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ffnshape/train/tokenizer.h"

namespace fs = std::filesystem;
using ffnshape::DataError;

namespace {

// A temporary directory with a small English text; the model is trained once for the whole suite.
// The fixture carries the suite name, so the library class is always written ffnshape::Tokenizer.
class Tokenizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("ffnshape_tokenizer_" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    const std::vector<std::string> lines = {
        "the quick brown fox jumps over the lazy dog.",
        "a feed-forward network widens the model and then narrows it again.",
        "the jury said the election was conducted well, and the city thanked them.",
        "training a tokenizer on a small text gives a small vocabulary of merges.",
        "numbers like 1961 and 42 are split into digits.",
        "she sells sea shells on the sea shore; the shells she sells are sea shells.",
    };
    std::ofstream out(*dir_ / "train.txt");
    for (int repeat = 0; repeat < 50; ++repeat) {
      for (const auto& line : lines) out << line << "\n";
    }
    out.close();
    tokenizer_ = new ffnshape::Tokenizer(
        ffnshape::Tokenizer::train({(*dir_ / "train.txt").string()}, (*dir_ / "tok").string(), kVocab, 2));
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
  }

  static constexpr int kVocab = 320;
  static fs::path* dir_;
  static ffnshape::Tokenizer* tokenizer_;
};

fs::path* Tokenizer::dir_ = nullptr;
ffnshape::Tokenizer* Tokenizer::tokenizer_ = nullptr;

TEST_F(Tokenizer, TrainsTheRequestedVocabularyWithDocumentedSpecialIds) {
  EXPECT_EQ(tokenizer_->vocab_size(), kVocab);
  EXPECT_EQ(tokenizer_->unk_id(), 0);
  EXPECT_EQ(tokenizer_->bos_id(), 1);
  EXPECT_EQ(tokenizer_->eos_id(), 2);
  EXPECT_EQ(tokenizer_->pad_id(), 3);
  EXPECT_TRUE(fs::exists(*dir_ / "tok.model"));
  EXPECT_TRUE(fs::exists(*dir_ / "tok.vocab"));
}

TEST_F(Tokenizer, RoundTripsSeenText) {
  const std::string text = "the quick brown fox jumps over the lazy dog.";
  const auto ids = tokenizer_->encode(text);
  EXPECT_LT(ids.size(), text.size());  // merges were learned
  EXPECT_EQ(tokenizer_->decode(ids), text);
}

TEST_F(Tokenizer, RoundTripsUnseenCharactersThroughByteFallback) {
  // Capitals, tabs, newlines, repeated spaces, accents, CJK and an emoji: none is in the training text.
  const std::string text = "  Zürich\tNaïve café —\n日本語のテキスト 🚀 QX{}|~\n\n  end  ";
  const auto ids = tokenizer_->encode(text);
  for (uint32_t id : ids) {
    EXPECT_NE(id, static_cast<uint32_t>(tokenizer_->unk_id()));
    EXPECT_LT(id, static_cast<uint32_t>(tokenizer_->vocab_size()));
  }
  EXPECT_EQ(tokenizer_->decode(ids), text);
  EXPECT_EQ(tokenizer_->decode(tokenizer_->encode("")), "");
}

TEST_F(Tokenizer, EncodeBatchEqualsSequentialEncode) {
  std::vector<std::string> texts;
  for (int i = 0; i < 37; ++i) {
    texts.push_back("document " + std::to_string(i) + ": " + std::string(static_cast<size_t>(i % 7), 'x') +
                    " the shells she sells are sea shells, ünïcödé " + std::to_string(i * i));
  }
  texts.push_back("");
  for (int threads : {1, 2, 4, 64}) {
    const auto batch = tokenizer_->encode_batch(texts, threads);
    ASSERT_EQ(batch.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(batch[i], tokenizer_->encode(texts[i])) << "text " << i;
  }
  EXPECT_TRUE(tokenizer_->encode_batch({}, 2).empty());
}

TEST_F(Tokenizer, LoadGivesTheSameTokenizer) {
  const auto loaded = ffnshape::Tokenizer::load((*dir_ / "tok.model").string());
  const std::string text = "sea shells, 1961 and Zürich";
  EXPECT_EQ(loaded.vocab_size(), kVocab);
  EXPECT_EQ(loaded.encode(text), tokenizer_->encode(text));
}

TEST_F(Tokenizer, DecodeRejectsIdsOutsideTheVocabulary) {
  EXPECT_THROW(tokenizer_->decode({5, static_cast<uint32_t>(kVocab)}), DataError);
}

TEST_F(Tokenizer, LoadOfMissingFileNamesThePath) {
  const std::string path = "/nonexistent/dir/tokenizer.model";
  try {
    ffnshape::Tokenizer::load(path);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(Tokenizer, LoadOfCorruptFileNamesThePath) {
  const auto path = fs::temp_directory_path() / ("ffnshape_corrupt_" + std::to_string(::getpid()) + ".model");
  std::ofstream(path) << "this is not a sentencepiece model";
  try {
    ffnshape::Tokenizer::load(path.string());
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  fs::remove(path);
}

TEST_F(Tokenizer, TrainRejectsBadInputWithoutExiting) {
  const auto dir = fs::temp_directory_path() / ("ffnshape_badtrain_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto text = (dir / "a.txt").string();
  std::ofstream(text) << "abc def\n";
  const auto prefix = (dir / "m").string();
  EXPECT_THROW(ffnshape::Tokenizer::train({text}, prefix, 100, 1), DataError);                // below the 260 reserved ids
  EXPECT_THROW(ffnshape::Tokenizer::train({}, prefix, 300, 1), DataError);                    // no files
  EXPECT_THROW(ffnshape::Tokenizer::train({(dir / "missing.txt").string()}, prefix, 300, 1), DataError);
  EXPECT_THROW(ffnshape::Tokenizer::train({text}, prefix, 300, 0), DataError);                // no threads
  std::ofstream(dir / "empty.txt").close();
  EXPECT_THROW(ffnshape::Tokenizer::train({(dir / "empty.txt").string()}, prefix, 300, 1), DataError);
  fs::remove_all(dir);
}

}  // namespace
