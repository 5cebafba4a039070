// Subword tokenizer: a SentencePiece BPE model with byte fallback, so any UTF-8 text round-trips, or
// a Hugging Face tokenizer.json (byte-level BPE, ffnshape/data/hf_tokenizer.h), chosen by the file.
//
// Models trained here fix the special ids: 0 <unk>, 1 <s> (bos), 2 </s> (eos, the document
// separator in token shards), 3 <pad>; then the 256 byte pieces <0x00>..<0xFF> (ids 4..259); then
// the learned merges. Normalisation is the identity and whitespace is kept as written, so
// decode(encode(text)) == text. Models made elsewhere load too; ask the accessors for their ids.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ffnshape/data/hf_tokenizer.h"
#include "ffnshape/train/data_error.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace ffnshape {

class Tokenizer {
 public:
  // Loads a SentencePiece .model, or a tokenizer.json (a .json file, or any file that starts with
  // '{'); a missing, corrupt or unsupported file is a DataError that names it.
  static Tokenizer load(const std::string& model_path);

  // Trains a BPE model on plain-text files (one sentence or paragraph per line) and writes
  // MODEL_PREFIX.model and MODEL_PREFIX.vocab. vocab_size counts the special and byte pieces, so it
  // must exceed 260 plus the number of distinct characters in the text. Bad input is a DataError,
  // never an exit.
  static Tokenizer train(const std::vector<std::string>& text_files, const std::string& model_prefix, int vocab_size,
                         int threads);

  // The text's ids and nothing else (tokenizer.json: tokenizers' add_special_tokens=False; special-token
  // strings written in the text are still those tokens, as tokenizers does).
  std::vector<uint32_t> encode(const std::string& text) const;
  // The ids as the tokenizer's own convention frames a prompt: SentencePiece puts bos first (when the
  // model has one); tokenizer.json applies its post-processor (Llama 3's BOS) and tokenizer_config.json's
  // add_bos_token / add_eos_token.
  std::vector<uint32_t> encode_with_special_tokens(const std::string& text) const;
  // Ids outside the vocabulary are a DataError (they mean shards and tokenizer do not match). Special
  // tokens decode to nothing, like SentencePiece's control pieces (bos, eos, pad).
  std::string decode(const std::vector<uint32_t>& ids) const;
  // Encodes on `threads` threads (at least 1); result i is encode(texts[i]).
  std::vector<std::vector<uint32_t>> encode_batch(const std::vector<std::string>& texts, int threads) const;

  int vocab_size() const;
  int unk_id() const;
  int bos_id() const;  // -1 when the model has none
  int eos_id() const;  // -1 when the model has none
  int pad_id() const;  // -1 when the model has none
  // The piece's text as the model stores it ("<s>", "▁the", "<0x0A>"); DataError outside the vocabulary.
  std::string piece(int id) const;
  const std::string& model_path() const { return model_path_; }
  // "sentencepiece" or "huggingface" (a tokenizer.json).
  std::string kind() const { return hf_ ? "huggingface" : "sentencepiece"; }

 private:
  Tokenizer(std::shared_ptr<const sentencepiece::SentencePieceProcessor> sp, std::string model_path)
      : sp_(std::move(sp)), model_path_(std::move(model_path)) {}
  Tokenizer(std::shared_ptr<const HfTokenizer> hf, std::string model_path)
      : hf_(std::move(hf)), model_path_(std::move(model_path)) {}

  // Shared so copies are cheap; the processor is immutable once loaded, hence safe across threads.
  // Exactly one of sp_ and hf_ is set.
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> sp_;
  std::shared_ptr<const HfTokenizer> hf_;
  std::string model_path_;
};

}  // namespace ffnshape
