// Hugging Face tokenizer.json, byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM2 style): the same ids as
// the `tokenizers` package. What is supported and what is refused by name: docs/data.md.
//
// Text is UTF-8; each maximal invalid subsequence is read as U+FFFD, exactly as Python's
// bytes.decode("utf-8", "replace") does. Special-token strings in the text are encoded as those
// tokens, as `tokenizers` does. Loading and encoding never touch torch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ffnshape/train/data_error.h"

namespace ffnshape {

class HfTokenizer {
 public:
  // Reads PATH (a tokenizer.json) and, when one sits beside it, tokenizer_config.json (bos / eos / pad
  // / unk tokens, add_bos_token / add_eos_token). A missing file, malformed JSON or an unsupported
  // feature is a DataError naming the file, the JSON path and the value.
  static HfTokenizer load(const std::string& path);
  // The same from text; config_json may be empty. `origin` names the source in messages.
  static HfTokenizer from_json(const std::string& tokenizer_json, const std::string& origin,
                               const std::string& config_json = "");

  // tokenizers' encode(text, add_special_tokens=False).
  std::vector<uint32_t> encode(std::string_view text) const;
  // encode() wrapped as the file asks: the post-processor's template (e.g. Llama 3's BOS), and the
  // add_bos_token / add_eos_token of tokenizer_config.json when the post-processor adds neither.
  std::vector<uint32_t> encode_with_special_tokens(std::string_view text) const;
  // Result i is encode(texts[i]); `threads` workers (at least 1).
  std::vector<std::vector<uint32_t>> encode_batch(const std::vector<std::string>& texts, int threads) const;
  // The ByteLevel decoder; invalid UTF-8 in the joined bytes becomes U+FFFD. Special tokens are kept
  // (so decode(encode(x)) == x) unless skip_special_tokens. Ids outside the vocabulary: DataError.
  std::string decode(const std::vector<uint32_t>& ids, bool skip_special_tokens = false) const;

  // 1 + the largest id of the vocabulary and the added tokens.
  int vocab_size() const;
  int token_to_id(std::string_view token) const;  // -1 when absent
  std::string id_to_token(int id) const;          // as stored ("Ġthe", "<|endoftext|>"); DataError outside
  bool is_special(int id) const;                  // an added token marked special
  // Special ids, -1 when none: from tokenizer_config.json when present, else bos from the
  // post-processor and eos from a well-known special token (docs/data.md "the eos rule").
  int bos_id() const;
  int eos_id() const;
  int pad_id() const;
  int unk_id() const;
  const std::string& path() const;

  struct Impl;

 private:
  explicit HfTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  // Immutable once loaded, so copies share it and threads may encode at once.
  std::shared_ptr<const Impl> impl_;
};

}  // namespace ffnshape
