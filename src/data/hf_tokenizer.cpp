// HfTokenizer: loading (tokenizer.json and tokenizer_config.json beside it), encoding in tokenizers'
// order (added tokens, normalizer, normalized added tokens, pre-tokenizer, BPE), decoding, lookups.
#include "ffnshape/data/hf_tokenizer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "hf_tokenizer_parts.h"
#include "../common/parallel_items.h"

namespace ffnshape {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw DataError("cannot read '" + path.string() + "'\n  fix: check its permissions");
  return text.str();
}

// Each thread keeps the word caches of the last few tokenizers it used, so alternating between two
// tokenizers does not empty a cache at every call.
hf::WordCache& thread_cache(uint64_t instance) {
  constexpr size_t kCaches = 4;
  thread_local std::array<hf::WordCache, kCaches> caches;
  thread_local size_t next_victim = 0;
  for (auto& cache : caches) {
    if (cache.owner() == instance) return cache;
  }
  hf::WordCache& cache = caches[next_victim++ % kCaches];
  cache.reset(instance);
  return cache;
}

}  // namespace

void HfTokenizer::Impl::encode_into(std::string_view text, std::vector<uint32_t>& out, hf::WordCache& cache) const {
  std::string repaired, normalized;
  text = hf::valid_utf8(text, repaired);
  const auto push_id = [&](uint32_t id) { out.push_back(id); };
  const auto encode_word = [&](std::string_view word) { model->encode_word(word, out, cache); };
  const auto pre_tokenize = [&](std::string_view piece) { pre_tokenizer->run(piece, encode_word); };
  const auto normalize = [&](std::string_view piece) {
    normalized_added.split(normalizer.apply(piece, normalized), pre_tokenize, push_id);
  };
  raw_added.split(text, normalize, push_id);
}

HfTokenizer HfTokenizer::load(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw DataError("tokenizer file '" + path + "' does not exist or is not a file\n  fix: check the path");
  }
  const fs::path config = fs::path(path).parent_path() / "tokenizer_config.json";
  const bool has_config = fs::is_regular_file(config, ec);
  return from_json(read_file(path), path, has_config ? read_file(config) : std::string());
}

HfTokenizer HfTokenizer::from_json(const std::string& tokenizer_json, const std::string& origin,
                                   const std::string& config_json) {
  auto impl = hf::parse_tokenizer_json(tokenizer_json, origin);
  const std::string config_origin = (fs::path(origin).parent_path() / "tokenizer_config.json").string();
  hf::assign_special_ids(*impl, config_json, config_origin);
  return HfTokenizer(std::move(impl));
}

std::vector<uint32_t> HfTokenizer::encode(std::string_view text) const {
  std::vector<uint32_t> out;
  out.reserve(text.size() / 3 + 4);
  impl_->encode_into(text, out, thread_cache(impl_->instance));
  return out;
}

std::vector<uint32_t> HfTokenizer::encode_with_special_tokens(std::string_view text) const {
  const Impl& t = *impl_;
  std::vector<uint32_t> out = t.template_prefix;
  if (!t.templated && t.add_bos && t.bos >= 0) out.push_back(static_cast<uint32_t>(t.bos));
  t.encode_into(text, out, thread_cache(t.instance));
  out.insert(out.end(), t.template_suffix.begin(), t.template_suffix.end());
  if (!t.templated && t.add_eos && t.eos >= 0) out.push_back(static_cast<uint32_t>(t.eos));
  return out;
}

std::vector<std::vector<uint32_t>> HfTokenizer::encode_batch(const std::vector<std::string>& texts, int threads) const {
  std::vector<std::vector<uint32_t>> out(texts.size());
  for_each_item_parallel(texts.size(), threads, [&](size_t i) { out[i] = encode(texts[i]); });
  return out;
}

std::string HfTokenizer::decode(const std::vector<uint32_t>& ids, bool skip_special_tokens) const {
  std::string bytes;
  for (uint32_t id : ids) {
    if (id >= impl_->decoded.size()) {
      throw DataError("token id " + std::to_string(id) + " is outside the vocabulary of '" + impl_->path + "' (size " +
                      std::to_string(impl_->decoded.size()) + ")\n  fix: use the tokenizer the ids were made with");
    }
    if (!(skip_special_tokens && impl_->special[id])) bytes += impl_->decoded[id];
  }
  std::string repaired;
  const std::string_view text = hf::valid_utf8(bytes, repaired);
  return text.data() == bytes.data() ? bytes : repaired;
}

int HfTokenizer::vocab_size() const { return static_cast<int>(impl_->tokens.size()); }

int HfTokenizer::token_to_id(std::string_view token) const {
  const auto found = impl_->ids.find(std::string(token));
  return found == impl_->ids.end() ? -1 : static_cast<int>(found->second);
}

std::string HfTokenizer::id_to_token(int id) const {
  if (id < 0 || id >= vocab_size()) {
    throw DataError("token id " + std::to_string(id) + " is outside the " + std::to_string(vocab_size()) +
                    "-token vocabulary of '" + impl_->path + "'");
  }
  return impl_->tokens[static_cast<size_t>(id)];
}

bool HfTokenizer::is_special(int id) const { return id >= 0 && id < vocab_size() && impl_->special[static_cast<size_t>(id)]; }
int HfTokenizer::bos_id() const { return impl_->bos; }
int HfTokenizer::eos_id() const { return impl_->eos; }
int HfTokenizer::pad_id() const { return impl_->pad; }
int HfTokenizer::unk_id() const { return impl_->unk; }
const std::string& HfTokenizer::path() const { return impl_->path; }

}  // namespace ffnshape
