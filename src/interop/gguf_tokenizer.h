// A GGUF file's embedded byte-level BPE vocabulary (tokenizer.ggml.model "gpt2") rebuilt as the
// Hugging Face files that describe it: tokenizer.json (vocabulary, merges, added tokens, the
// pre-tokenizer that tokenizer.ggml.pre names) and tokenizer_config.json (bos / eos / pad / unk,
// add_bos_token, chat_template).
#pragma once

#include <optional>
#include <string>

namespace ffnshape::interop {

class GgufFile;

struct HfTokenizerFiles {
  std::string tokenizer_json;
  std::string tokenizer_config_json;
  std::string pre_tokenizer;  // tokenizer.ggml.pre, "default" when absent
  int64_t tokens = 0;
  int64_t merges = 0;
};

// Nothing for a file whose vocabulary is not of type gpt2. DataError when the vocabulary is malformed
// (token types or merges that do not fit the tokens) or its pre-tokenizer is one ffnshape does not
// know (named, with the known ones).
std::optional<HfTokenizerFiles> hf_tokenizer_from_gguf(const GgufFile& gguf);

}  // namespace ffnshape::interop
