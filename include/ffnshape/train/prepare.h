// Text to training data: a SentencePiece tokenizer (trained or given), a train / validation split by
// document, token shards in the llm.c format, and a meta.json describing them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ffnshape {

struct PrepareOptions {
  std::vector<std::string> inputs;  // text files, or folders whose regular files are documents
  std::string out_dir;
  int vocab_size = 4096;            // when training a tokenizer
  std::string tokenizer;            // an existing SentencePiece model instead of training one
  double val_fraction = 0.05;       // share of documents held out for validation
  uint64_t seed = 0;                // of the document split
  int64_t shard_tokens = 100'000'000;
  int threads = 0;                  // 0: all cores
  bool quiet = false;
};

struct PrepareResult {
  int64_t train_documents = 0, val_documents = 0;
  int64_t train_tokens = 0, val_tokens = 0;
  int vocab_size = 0;
  std::string tokenizer_path;
  std::vector<std::string> shards;
};

// Each document is encoded and followed by the tokenizer's end-of-sequence id. Throws DataError for
// missing or empty inputs and ConfigError for impossible options.
PrepareResult prepare_data(const PrepareOptions& options);

}  // namespace ffnshape
