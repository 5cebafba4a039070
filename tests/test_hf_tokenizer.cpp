// tokenizer.json by hand: a vocabulary small enough to follow the merges on paper, both merge forms,
// added tokens, invalid UTF-8, the special-id rule, the facade, and the refusals (each names its JSON
// path and value). The agreement with the tokenizers package on real files: tests/hf_tokenizer_test.sh.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ffnshape/data/hf_tokenizer.h"
#include "ffnshape/train/tokenizer.h"
#include "temp_dir.h"

using ffnshape::DataError;
using ffnshape::HfTokenizer;
using nlohmann::json;
using Ids = std::vector<uint32_t>;

namespace {

// Byte-level characters: 'Ġ' is the space, and "ï¿½" the three bytes of U+FFFD (EF BF BD).
// Merges by rank: a+b, ab+c, Ġ+a. So "ab ab" splits into "ab" and " ab"; in " ab" the pair (a, b)
// outranks (Ġ, a): Ġ ab, and (Ġ, ab) has no merge.
json tiny(bool array_merges = false) {
  json merges = array_merges ? json::array({json::array({"a", "b"}), json::array({"ab", "c"}), json::array({"Ġ", "a"})})
                             : json::array({"a b", "ab c", "Ġ a"});
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens",
       json::array({{{"id", 7}, {"content", "<|endoftext|>"}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", true}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        {"vocab",
         {{"a", 0}, {"b", 1}, {"c", 2}, {"Ġ", 3}, {"ab", 4}, {"abc", 5}, {"Ġa", 6}, {"<|endoftext|>", 7}, {"ï", 8},
          {"¿", 9}, {"½", 10}}},
        {"merges", merges}}},
  };
}

HfTokenizer load(const json& j, const std::string& config = "") { return HfTokenizer::from_json(j.dump(), "tiny.json", config); }

// The DataError message of loading `j`.
std::string refusal(const json& j) {
  try {
    load(j);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST(HfTokenizer, MergesByRankOnPaper) {
  const auto tok = load(tiny());
  EXPECT_EQ(tok.encode("abc"), (Ids{5}));        // a b -> ab, then ab c -> abc
  EXPECT_EQ(tok.encode("ab ab"), (Ids{4, 3, 4}));  // "ab" | " ab": (a,b) before (Ġ,a)
  EXPECT_EQ(tok.encode(" a"), (Ids{6}));
  EXPECT_EQ(tok.encode("cab"), (Ids{2, 4}));
  EXPECT_EQ(tok.encode("xyz"), (Ids{}));  // bytes outside the vocabulary and no unk_token: dropped, as tokenizers does
  EXPECT_EQ(tok.encode(""), (Ids{}));
}

TEST(HfTokenizer, BothMergeFormsGiveTheSameIds) {
  const auto strings = load(tiny(false)), arrays = load(tiny(true));
  for (const std::string text : {"abc ab cab", " a a", "abcabc"}) EXPECT_EQ(strings.encode(text), arrays.encode(text)) << text;
}

TEST(HfTokenizer, SpecialTokensInTheTextAreTokens) {
  const auto tok = load(tiny());
  EXPECT_EQ(tok.encode("<|endoftext|>"), (Ids{7}));
  EXPECT_EQ(tok.encode("ab<|endoftext|>c"), (Ids{4, 7, 2}));
  EXPECT_EQ(tok.encode("<|endoftext"), (Ids{}));  // not the whole token: its bytes, none in this vocabulary
  EXPECT_TRUE(tok.is_special(7));
  EXPECT_EQ(tok.decode({4, 7, 2}), "ab<|endoftext|>c");
  EXPECT_EQ(tok.decode({4, 7, 2}, /*skip_special_tokens=*/true), "abc");
}

TEST(HfTokenizer, InvalidUtf8BecomesReplacementCharacters) {
  const auto tok = load(tiny());
  // "a", U+FFFD (its own pre-token: neither letter nor digit), "b".
  EXPECT_EQ(tok.encode("a\xff" "b"), (Ids{0, 8, 9, 10, 1}));
  // A truncated 3-byte sequence is one maximal subpart: one U+FFFD, as Python's "replace" gives.
  EXPECT_EQ(tok.encode("a\xe2\x82"), (Ids{0, 8, 9, 10}));
  EXPECT_EQ(tok.encode("\xc0\xaf"), (Ids{8, 9, 10, 8, 9, 10}));  // overlong: two
  EXPECT_EQ(tok.decode({8, 9}), "\xEF\xBF\xBD");                  // half a character decodes as U+FFFD
}

TEST(HfTokenizer, DecodeRoundTrips) {
  const auto tok = load(tiny());
  for (const std::string text : {"abc ab", " a cab", "ab<|endoftext|> abc"}) EXPECT_EQ(tok.decode(tok.encode(text)), text);
  EXPECT_EQ(tok.id_to_token(6), "Ġa");
  EXPECT_EQ(tok.token_to_id("abc"), 5);
  EXPECT_EQ(tok.token_to_id("zzz"), -1);
  EXPECT_EQ(tok.vocab_size(), 11);
  EXPECT_THROW(tok.decode({11}), DataError);
  EXPECT_THROW(tok.id_to_token(-1), DataError);
}

TEST(HfTokenizer, SpecialIdsFollowTheRule) {
  auto j = tiny();
  const auto plain = load(j);
  EXPECT_EQ(plain.eos_id(), 7);  // <|endoftext|>, a special added token
  EXPECT_EQ(plain.bos_id(), -1);
  EXPECT_EQ(plain.unk_id(), -1);
  EXPECT_EQ(plain.encode_with_special_tokens("ab"), (Ids{4}));
  // A Llama-3-style template puts bos first.
  j["post_processor"] = {{"type", "TemplateProcessing"},
                         {"single", json::array({{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}},
                                                 {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
                         {"pair", json::array()},
                         {"special_tokens", {{"<|endoftext|>", {{"id", "<|endoftext|>"}, {"ids", {7}}, {"tokens", {"<|endoftext|>"}}}}}}};
  const auto templated = load(j);
  EXPECT_EQ(templated.bos_id(), 7);
  EXPECT_EQ(templated.encode_with_special_tokens("ab"), (Ids{7, 4}));
  EXPECT_EQ(templated.encode("ab"), (Ids{4}));
  // tokenizer_config.json decides when present, in either form, and may add bos itself.
  const auto configured = load(tiny(), R"({"bos_token": {"content": "c"}, "eos_token": "Ġa", "pad_token": null,
                                           "add_bos_token": true})");
  EXPECT_EQ(configured.bos_id(), 2);
  EXPECT_EQ(configured.eos_id(), 6);
  EXPECT_EQ(configured.pad_id(), -1);
  EXPECT_EQ(configured.encode_with_special_tokens("ab"), (Ids{2, 4}));
  EXPECT_THROW(load(tiny(), R"({"eos_token": "<nope>"})"), DataError);
}

TEST(HfTokenizer, RefusesWhatItDoesNotSupportByName) {
  const auto expect_refusal = [](json j, const std::vector<std::string>& words) {
    const std::string message = refusal(j);
    for (const auto& word : words) EXPECT_NE(message.find(word), std::string::npos) << word << " in: " << message;
    EXPECT_NE(message.find("fix:"), std::string::npos) << message;
  };
  auto j = tiny();
  j["model"]["type"] = "WordPiece";
  expect_refusal(j, {"model.type", "WordPiece", "not supported"});
  j = tiny();
  j["model"]["dropout"] = 0.1;
  expect_refusal(j, {"model.dropout", "0.1"});
  j = tiny();
  j["normalizer"] = {{"type", "Lowercase"}};
  expect_refusal(j, {"normalizer.type", "Lowercase"});
  j = tiny();
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", json::array({{{"type", "Split"}, {"pattern", {{"Regex", "\\d"}}},
                                                        {"behavior", "MergedWithPrevious"}, {"invert", false}},
                                                       {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}};
  expect_refusal(j, {"pre_tokenizer.pretokenizers[0].behavior", "MergedWithPrevious"});
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Isolated";
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"Regex", "\\w+"}};
  expect_refusal(j, {"pre_tokenizer.pretokenizers[0].pattern.Regex", "\\w"});
  j = tiny();
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  expect_refusal(j, {"pre_tokenizer.type", "Whitespace"});
  j = tiny();
  j["pre_tokenizer"] = nullptr;
  expect_refusal(j, {"pre_tokenizer", "byte-level"});
  j = tiny();
  j["decoder"] = {{"type", "WordPiece"}};
  expect_refusal(j, {"decoder", "WordPiece"});
  j = tiny();
  j["truncation"] = {{"max_length", 512}};
  expect_refusal(j, {"truncation", "512"});
  j = tiny();
  j["post_processor"] = {{"type", "SomethingElse"}};
  expect_refusal(j, {"post_processor.type", "SomethingElse"});
}

TEST(HfTokenizer, MalformedFilesAreDataErrors) {
  EXPECT_THROW(HfTokenizer::from_json("{not json", "bad.json"), DataError);
  try {
    HfTokenizer::from_json("{not json", "bad.json");
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: not valid JSON"), std::string::npos) << e.what();
  }
  auto j = tiny();
  j["model"].erase("vocab");
  EXPECT_NE(refusal(j).find("model.vocab is missing"), std::string::npos) << refusal(j);
  j = tiny();
  j["model"]["merges"] = json::array({"a x"});
  EXPECT_NE(refusal(j).find("model.merges[0]"), std::string::npos) << refusal(j);
  j = tiny();
  j["model"]["merges"] = json::array({"abc"});
  EXPECT_NE(refusal(j).find("model.merges[0]"), std::string::npos) << refusal(j);
  j = tiny();
  j["model"]["vocab"]["a"] = "zero";
  EXPECT_NE(refusal(j).find("model.vocab.a"), std::string::npos) << refusal(j);
  j = tiny();
  j["added_tokens"][0].erase("content");
  EXPECT_NE(refusal(j).find("added_tokens[0].content"), std::string::npos) << refusal(j);
  EXPECT_THROW(HfTokenizer::load("/nonexistent/tokenizer.json"), DataError);
  // Found by fuzz_hf_tokenizer_json: one id far beyond the others made the id tables take 9 GB.
  j = tiny();
  j["model"]["vocab"]["abc"] = 293666663;
  EXPECT_NE(refusal(j).find("largest token id is 293666663, far beyond the 12 tokens"), std::string::npos) << refusal(j);
  j = tiny();
  j["model"]["vocab"]["abc"] = 1000;  // a gap of unused ids is allowed
  EXPECT_EQ(load(j).vocab_size(), 1001);
}

TEST(HfTokenizer, TheFacadeLoadsTokenizerJson) {
  ffnshape::testing::TempDir dir("ffnshape_hf_tokenizer");
  std::ofstream(dir.file("tokenizer.json")) << tiny().dump();
  std::ofstream(dir.file("tokenizer_config.json")) << R"({"bos_token": "c", "eos_token": "<|endoftext|>"})";
  const auto tok = ffnshape::Tokenizer::load(dir.file("tokenizer.json"));
  EXPECT_EQ(tok.kind(), "huggingface");
  EXPECT_EQ(tok.encode("ab ab"), (Ids{4, 3, 4}));
  EXPECT_EQ(tok.encode_batch({"abc", "ab ab", "c"}, 2), (std::vector<Ids>{{5}, {4, 3, 4}, {2}}));
  EXPECT_EQ(tok.decode({4, 7, 2}), "abc");  // the facade drops special tokens, like SentencePiece's control pieces
  EXPECT_EQ(tok.vocab_size(), 11);
  EXPECT_EQ(tok.bos_id(), 2);
  EXPECT_EQ(tok.eos_id(), 7);
  EXPECT_EQ(tok.piece(3), "Ġ");
  EXPECT_EQ(tok.encode_with_special_tokens("ab"), (Ids{4}));  // no template and no add_bos_token
  std::ofstream(dir.file("broken.json")) << R"({"model": {"type": "Unigram"}})";
  EXPECT_THROW(ffnshape::Tokenizer::load(dir.file("broken.json")), DataError);
}

TEST(HfTokenizer, LongRunsOfSpacesPassLlama3Pattern) {
  // \s*[\r\n]+ backtracks over the whole run: linear, but beyond PCRE2's default match limit.
  auto j = tiny();
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       json::array({{{"type", "Split"},
                     {"pattern", {{"Regex", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
                     {"behavior", "Isolated"},
                     {"invert", false}},
                    {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}})}};
  const auto tok = load(j);
  const std::string spaces(20'000'000, ' ');
  const auto ids = tok.encode(spaces + "ab");
  ASSERT_EQ(ids.size(), spaces.size() + 1);  // N - 1 spaces (no merges here), then " ab": Ġ ab
  EXPECT_EQ(ids.back(), 4u);
}

TEST(HfTokenizer, DigitsThenByteLevelRegex) {
  // Two patterns nested (Digits' split feeds ByteLevel's): "ab", "1", " ab"; no byte '1' in the vocabulary.
  auto j = tiny();
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers", json::array({{{"type", "Digits"}, {"individual_digits", true}},
                                                       {{"type", "ByteLevel"}, {"add_prefix_space", false},
                                                        {"trim_offsets", true}, {"use_regex", true}}})}};
  EXPECT_EQ(load(j).encode("ab1 ab"), (Ids{4, 3, 4}));
}
