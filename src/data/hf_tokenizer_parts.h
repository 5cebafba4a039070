// The stages of a tokenizer.json encoder, in the order text meets them: UTF-8 repair, added-token
// extraction, normalizer, pre-tokenizer (regex splits, ByteLevel), BPE, post-processor. Internal to
// src/data; the public face is include/ffnshape/data/hf_tokenizer.h.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ffnshape/data/hf_tokenizer.h"

namespace ffnshape::hf {

// A non-owning callable reference: the hot path passes callbacks without std::function's allocations.
template <class Signature>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
  FunctionRef(F&& f) : object_(const_cast<void*>(static_cast<const void*>(&f))),
                       call_([](void* o, Args... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(a...); }) {}
  R operator()(Args... a) const { return call_(object_, a...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

using TextSink = FunctionRef<void(std::string_view)>;
using IdSink = FunctionRef<void(uint32_t)>;

// ---- utf8.cpp ----------------------------------------------------------------------------------
// `text` itself when it is valid UTF-8; otherwise a copy in `scratch` where each maximal invalid
// subsequence is U+FFFD, as Python's bytes.decode("utf-8", "replace") and Rust's from_utf8_lossy do.
std::string_view valid_utf8(std::string_view text, std::string& scratch);
// The code point at text[i] (valid UTF-8) and its length in bytes.
uint32_t code_point_at(std::string_view text, size_t i, size_t* length);
void append_utf8(std::string& out, uint32_t code_point);
bool is_unicode_white_space(uint32_t code_point);  // the White_Space property (Rust's char::is_whitespace)

// ---- byte_level.cpp ----------------------------------------------------------------------------
// GPT-2's bytes_to_unicode: the UTF-8 of the printable character that stands for byte b.
const std::string& byte_char(uint8_t b);
// Maps a token written in those characters back to bytes; false when a character is not one of them.
bool byte_chars_to_bytes(std::string_view token, std::string& bytes);

// ---- regex.cpp ---------------------------------------------------------------------------------
// A PCRE2 pattern (UTF, Unicode properties, JIT) with the file's (Oniguruma's) meaning of \s and \S.
class Regex {
 public:
  // `where` (the JSON path) names the pattern in errors; literal patterns match their text verbatim.
  Regex(const std::string& pattern, const std::string& where, bool literal = false);
  // Calls on_match(start, end) for each non-empty match, left to right, as Oniguruma's search does.
  void for_each_match(std::string_view text, FunctionRef<void(size_t, size_t)> on_match) const;

 private:
  std::shared_ptr<void> code_;  // pcre2_code_8
};
// The pattern with \s and \S spelled as the White_Space property (PCRE2's \s adds U+180E); \w, \W, \b,
// \B (whose Unicode meaning differs between the engines) are a DataError naming `where`.
std::string oniguruma_compatible(const std::string& pattern, const std::string& where);

// ---- normalizer.cpp ----------------------------------------------------------------------------
class Normalizer {
 public:
  enum class Form { kNone, kNfc, kNfd, kNfkc, kNfkd };
  void add(Form form) { forms_.push_back(form); }
  bool empty() const { return forms_.empty(); }
  // `text`, or the normalized text in `scratch`.
  std::string_view apply(std::string_view text, std::string& scratch) const;

 private:
  std::vector<Form> forms_;
};

// ---- added_tokens.cpp --------------------------------------------------------------------------
struct AddedToken {
  std::string content;
  uint32_t id = 0;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = false;
};

// Finds added tokens as tokenizers' AddedVocabulary does: leftmost-longest matches, left to right,
// with the single_word / lstrip / rstrip rules.
class AddedTokenMatcher {
 public:
  void add(const AddedToken& token, std::string pattern);
  bool empty() const { return tokens_.empty(); }
  void split(std::string_view text, TextSink on_text, IdSink on_token) const;

 private:
  size_t longest_match_at(std::string_view text, size_t start, int* token) const;
  struct Node {
    std::vector<std::pair<uint8_t, int>> children;
    int token = -1;  // index into tokens_ of the pattern ending here
  };
  std::vector<Node> nodes_{Node{}};
  std::vector<AddedToken> tokens_;
  std::array<bool, 256> first_byte_{};
};

// ---- pre_tokenizer.cpp -------------------------------------------------------------------------
struct SplitStep {
  Regex regex;
  bool keep_matches = true;  // Isolated keeps them as pieces, Removed drops them
};

class PreTokenizer {
 public:
  std::vector<SplitStep> splits;  // before ByteLevel, in order
  bool add_prefix_space = false;  // ByteLevel's
  std::unique_ptr<Regex> byte_level_regex;  // ByteLevel(use_regex=true): GPT-2's pattern
  // Calls on_word for each word (bytes, before the byte-to-character mapping) of `text`.
  void run(std::string_view text, TextSink on_word) const;

 private:
  void split_from(size_t step, std::string_view piece, TextSink on_word) const;
  void byte_level(std::string_view piece, TextSink on_word) const;
};
extern const char* const kGpt2SplitPattern;

// ---- bpe.cpp -----------------------------------------------------------------------------------
// Per-thread memory of finished words, so frequent words skip the merge loop.
class WordCache {
 public:
  explicit WordCache(uint64_t owner = 0) : owner_(owner) {}
  // Points *ids / *count at the cached ids of `word`; false when absent.
  bool find(std::string_view word, uint64_t hash, const uint32_t** ids, size_t* count) const;
  void insert(std::string_view word, uint64_t hash, const uint32_t* ids, size_t count);
  uint64_t owner() const { return owner_; }
  void reset(uint64_t owner);

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t key_offset = 0, key_length = 0, ids_offset = 0, ids_count = 0;
    bool used = false;
  };
  uint64_t owner_;
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<uint32_t> ids_;
  size_t used_ = 0;
};

class BpeModel {
 public:
  struct Options {
    bool byte_fallback = false, fuse_unk = false, ignore_merges = false;
    int unk_id = -1;
  };
  // vocab: tokens as stored (byte-level characters) -> ids; merges: pairs of stored tokens, by rank.
  // `where` prefixes errors (unknown merge parts).
  BpeModel(const std::vector<std::pair<std::string, uint32_t>>& vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, Options options, const std::string& where);
  // Appends the ids of one word (raw bytes); `cache` belongs to the calling thread.
  void encode_word(std::string_view word, std::vector<uint32_t>& out, WordCache& cache) const;

 private:
  struct Merge {
    uint32_t rank = 0, new_id = 0;
  };
  bool find_merge(uint32_t left, uint32_t right, Merge* merge) const;
  void initial_symbols(std::string_view word, std::vector<uint32_t>& symbols) const;
  void merge_symbols(std::vector<uint32_t>& symbols) const;
  void merge_with_heap(std::vector<uint32_t>& symbols) const;

  Options options_;
  std::array<std::vector<uint32_t>, 256> byte_ids_;  // a byte's initial symbols (empty: unknown)
  std::array<bool, 256> byte_is_fallback_{};          // those are <0xNN> pieces (byte_fallback)
  std::unordered_map<std::string, uint32_t> word_ids_;  // raw bytes -> id, for ignore_merges
  struct MergeSlot {
    uint64_t key = ~uint64_t{0};
    Merge merge;
  };
  std::vector<MergeSlot> merge_table_;  // open addressing on (left << 32 | right)
  uint64_t merge_mask_ = 0;
};

uint64_t hash_bytes(std::string_view bytes);

}  // namespace ffnshape::hf

namespace ffnshape {

struct HfTokenizer::Impl {
  std::string path;
  uint64_t instance = 0;  // tells per-thread word caches apart
  hf::Normalizer normalizer;
  hf::AddedTokenMatcher raw_added, normalized_added;
  std::unique_ptr<hf::PreTokenizer> pre_tokenizer;
  std::unique_ptr<hf::BpeModel> model;
  std::vector<uint32_t> template_prefix, template_suffix;  // the post-processor's single-sequence template
  bool templated = false;                                  // the post-processor has a template
  bool add_bos = false, add_eos = false;                   // tokenizer_config.json, when no template
  std::vector<std::string> tokens;        // id -> token as stored ("" for a gap)
  std::vector<std::string> decoded;       // id -> bytes the ByteLevel decoder gives
  std::vector<uint8_t> special;           // id -> added token marked special
  std::unordered_map<std::string, uint32_t> ids;  // token -> id (added tokens win)
  int bos = -1, eos = -1, pad = -1, unk = -1;

  void encode_into(std::string_view text, std::vector<uint32_t>& out, hf::WordCache& cache) const;
};

namespace hf {
// hf_tokenizer_json.cpp: the parts a tokenizer.json asks for; `origin` names it in errors.
std::shared_ptr<HfTokenizer::Impl> parse_tokenizer_json(const std::string& text, const std::string& origin);
// hf_special_ids.cpp: bos / eos / pad / unk (and add_bos / add_eos) by the documented rule.
void assign_special_ids(HfTokenizer::Impl& impl, const std::string& config_text, const std::string& config_origin);
}  // namespace hf

}  // namespace ffnshape
