#include "gguf_tokenizer.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ffnshape/interop/gguf.h"
#include "ffnshape/train/data_error.h"
#include "../data/hf_tokenizer_parts.h"  // GPT-2's byte alphabet and UTF-8 checks, shared with the reader

namespace ffnshape::interop {
namespace {

using json = nlohmann::ordered_json;

// Whether a token is written in GPT-2's byte alphabet (bytes_to_unicode), as a byte-level vocabulary
// spells its tokens. Text that is not valid UTF-8 is not.
bool in_byte_alphabet(const std::string& token) {
  std::string scratch, bytes;
  if (hf::valid_utf8(token, scratch).data() != token.data()) return false;  // repaired: it was invalid
  return hf::byte_chars_to_bytes(token, bytes);
}

// A token as the vocabulary of tokenizer.json must spell it: tokens already written in the byte
// alphabet stay; any other (llama.cpp keeps some as raw text) is spelled byte by byte, as
// transformers' GGUF converter does.
std::string byte_level_spelling(const std::string& token) {
  if (in_byte_alphabet(token)) return token;
  std::string out;
  for (unsigned char b : token) out += hf::byte_char(b);
  return out;
}

const char* const kGpt2Split = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const char* const kLlama3Split =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";
const char* const kQwen2Split =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";

json byte_level(bool use_regex) {
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", use_regex}};
}

// tokenizer.ggml.pre names llama.cpp's pre-tokenizer: the split that the merges were learned on.
json pre_tokenizer_for(const std::string& pre) {
  static const std::set<std::string> gpt2 = {"default", "gpt-2", "gpt2", "mpt", "olmo", "jais"};
  static const std::set<std::string> digits_then_gpt2 = {"smollm", "starcoder", "refact", "command-r", "codeshell"};
  static const std::map<std::string, const char*> splits = {
      {"llama-bpe", kLlama3Split}, {"llama3", kLlama3Split}, {"llama-v3", kLlama3Split}, {"dbrx", kLlama3Split},
      {"smaug-bpe", kLlama3Split}, {"falcon3", kLlama3Split}, {"qwen2", kQwen2Split},  {"stablelm2", kQwen2Split},
      {"deepseek-r1-qwen", kQwen2Split}};
  if (gpt2.count(pre)) return byte_level(true);
  if (digits_then_gpt2.count(pre)) {
    return {{"type", "Sequence"},
            {"pretokenizers", json::array({{{"type", "Digits"}, {"individual_digits", true}}, byte_level(true)})}};
  }
  if (const auto it = splits.find(pre); it != splits.end()) {
    const json split = {{"type", "Split"},
                        {"pattern", {{"Regex", it->second}}},
                        {"behavior", "Isolated"},
                        {"invert", false}};
    return {{"type", "Sequence"}, {"pretokenizers", json::array({split, byte_level(false)})}};
  }
  std::string known;
  for (const auto* names : {&gpt2, &digits_then_gpt2}) {
    for (const auto& name : *names) known += " " + name;
  }
  for (const auto& [name, pattern] : splits) known += " " + name;
  throw DataError("tokenizer.ggml.pre is '" + pre + "', a pre-tokenizer ffnshape does not know\n  known:" + known +
                  "\n  fix: give the model's Hugging Face folder (its tokenizer.json) instead");
}

int64_t token_id(const GgufFile& g, const char* key, int64_t tokens) {
  if (!g.has(key)) return -1;
  const auto id = g.integer(key);
  if (id < 0 || id >= tokens) {
    throw DataError("'" + g.path() + "': " + key + " is " + std::to_string(id) + ", outside the " +
                    std::to_string(tokens) + " tokens\n  fix: give an unmodified llama.cpp conversion");
  }
  return id;
}

json added_tokens(const std::vector<std::string>& tokens, const std::vector<int64_t>& types) {
  json added = json::array();
  for (size_t id = 0; id < types.size(); ++id) {
    const bool control = types[id] == 3, user_defined = types[id] == 4;
    if (!control && !user_defined) continue;
    // A control token outside the byte alphabet is a mislabel of llama.cpp's; transformers skips it too.
    if (control && !in_byte_alphabet(tokens[id])) continue;
    added.push_back({{"id", id}, {"content", tokens[id]}, {"single_word", false}, {"lstrip", false},
                     {"rstrip", false}, {"normalized", false}, {"special", control}});
  }
  return added;
}

json model_section(const std::vector<std::string>& tokens, const std::vector<std::string>& merges) {
  json vocab = json::object();
  for (size_t id = 0; id < tokens.size(); ++id) vocab[byte_level_spelling(tokens[id])] = id;
  json pairs = json::array();
  for (const auto& merge : merges) {
    const auto space = merge.find(' ');
    if (space == std::string::npos || merge.find(' ', space + 1) != std::string::npos) {
      throw DataError("a merge of tokenizer.ggml.merges is '" + merge + "', not two tokens split by one space"
                      "\n  fix: give an unmodified llama.cpp conversion");
    }
    pairs.push_back({merge.substr(0, space), merge.substr(space + 1)});
  }
  return {{"type", "BPE"},          {"dropout", nullptr},        {"unk_token", nullptr},
          {"continuing_subword_prefix", ""}, {"end_of_word_suffix", ""}, {"fuse_unk", false},
          {"byte_fallback", false}, {"ignore_merges", false},    {"vocab", vocab},
          {"merges", pairs}};
}

json post_processor(int64_t bos, bool add_bos, const std::vector<std::string>& tokens) {
  json single = json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}});
  json pair = json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}});
  json specials = json::object();
  if (add_bos && bos >= 0) {
    const json bos_piece = {{"SpecialToken", {{"id", tokens[bos]}, {"type_id", 0}}}};
    single.insert(single.begin(), bos_piece);
    pair.insert(pair.begin(), bos_piece);
    specials[tokens[bos]] = {{"id", tokens[bos]}, {"ids", {bos}}, {"tokens", {tokens[bos]}}};
  }
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", specials}};
}

// tokenizer.json is UTF-8: a vocabulary string that is not (a corrupt file) is named, with its index.
void check_utf8(const GgufFile& g, const char* key, const std::vector<std::string>& strings) {
  std::string scratch;
  for (size_t i = 0; i < strings.size(); ++i) {
    if (hf::valid_utf8(strings[i], scratch).data() != strings[i].data()) {
      throw DataError("'" + g.path() + "': " + key + "[" + std::to_string(i) + "] is not valid UTF-8" +
                      "\n  fix: the file is corrupt or not a llama.cpp conversion; convert the model again");
    }
  }
}

}  // namespace

std::optional<HfTokenizerFiles> hf_tokenizer_from_gguf(const GgufFile& g) {
  if (!g.has("tokenizer.ggml.model") || g.string("tokenizer.ggml.model") != "gpt2") return std::nullopt;
  HfTokenizerFiles files;
  files.pre_tokenizer = g.has("tokenizer.ggml.pre") ? g.string("tokenizer.ggml.pre") : "default";
  const auto pre = pre_tokenizer_for(files.pre_tokenizer);
  const auto tokens = g.strings("tokenizer.ggml.tokens");
  const auto merges = g.has("tokenizer.ggml.merges") ? g.strings("tokenizer.ggml.merges") : std::vector<std::string>{};
  const auto types = g.has("tokenizer.ggml.token_type") ? g.integers("tokenizer.ggml.token_type") : std::vector<int64_t>{};
  check_utf8(g, "tokenizer.ggml.tokens", tokens);
  check_utf8(g, "tokenizer.ggml.merges", merges);
  if (g.has("tokenizer.chat_template")) check_utf8(g, "tokenizer.chat_template", {g.string("tokenizer.chat_template")});
  if (!types.empty() && types.size() != tokens.size()) {
    throw DataError("'" + g.path() + "' has " + std::to_string(types.size()) + " token types for " +
                    std::to_string(tokens.size()) + " tokens\n  fix: give an unmodified llama.cpp conversion");
  }
  const auto n = static_cast<int64_t>(tokens.size());
  const auto bos = token_id(g, "tokenizer.ggml.bos_token_id", n);
  const bool add_bos = g.has("tokenizer.ggml.add_bos_token") && g.boolean("tokenizer.ggml.add_bos_token");
  const json tokenizer = {{"version", "1.0"},
                          {"truncation", nullptr},
                          {"padding", nullptr},
                          {"added_tokens", added_tokens(tokens, types)},
                          {"normalizer", nullptr},
                          {"pre_tokenizer", pre},
                          {"post_processor", post_processor(bos, add_bos, tokens)},
                          {"decoder", byte_level(true)},
                          {"model", model_section(tokens, merges)}};
  json config = {{"add_bos_token", add_bos}};
  const std::pair<const char*, const char*> specials[] = {{"bos_token", "tokenizer.ggml.bos_token_id"},
                                                          {"eos_token", "tokenizer.ggml.eos_token_id"},
                                                          {"unk_token", "tokenizer.ggml.unknown_token_id"},
                                                          {"pad_token", "tokenizer.ggml.padding_token_id"}};
  for (const auto& [name, key] : specials) {
    const auto id = token_id(g, key, n);
    config[name] = id >= 0 ? json(tokens[id]) : json(nullptr);
  }
  if (g.has("tokenizer.chat_template")) config["chat_template"] = g.string("tokenizer.chat_template");
  files.tokenizer_json = tokenizer.dump(2);
  files.tokenizer_config_json = config.dump(2);
  files.tokens = n;
  files.merges = static_cast<int64_t>(merges.size());
  return files;
}

}  // namespace ffnshape::interop
