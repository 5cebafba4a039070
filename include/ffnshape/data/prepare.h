// A corpus to training data: a tokenizer (given, or a SentencePiece BPE trained on the training
// documents), a train / validation split by document, token shards in the llm.c format, and a
// meta.json describing them. Streams the corpus: memory does not grow with its size (docs/data.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffnshape/data/corpus.h"

namespace ffnshape {

struct PrepareOptions {
  std::vector<std::string> inputs;  // files, folders or globs of text / JSONL / Parquet (data/corpus.h)
  std::string out_dir;
  CorpusFormat format = CorpusFormat::automatic;
  std::string text_field = "text";  // JSONL field / Parquet column holding the text
  int vocab_size = 4096;            // when training a tokenizer
  std::string tokenizer;            // FILE.model, tokenizer.json or a run folder instead of training one
  double val_fraction = 0.05;       // share of documents held out for validation
  uint64_t seed = 0;                // of the document split
  int64_t shard_tokens = 100'000'000;
  int64_t max_tokens = 0;           // > 0: stop before the document that would take train + val past it
  bool dedup = false;               // drop exact duplicate documents (64-bit hash of the text)
  bool skip_bad = false;            // count and skip bad documents and files instead of stopping
  int threads = 0;                  // 0: all cores
  bool quiet = false;
};

struct PrepareResult {
  int64_t train_documents = 0, val_documents = 0;
  int64_t train_tokens = 0, val_tokens = 0;
  int64_t skipped_documents = 0, skipped_files = 0, duplicate_documents = 0;
  bool resumed = false;  // continued an interrupted prepare of the same inputs and options
  int vocab_size = 0;
  std::string tokenizer_path;
  std::vector<std::string> shards;
};

// Each document is encoded and followed by the tokenizer's end-of-sequence id. An interrupted
// prepare leaves its state in OUT_DIR and the same call continues it. Throws DataError for missing,
// empty or bad input (naming the file and line or row group) and ConfigError for impossible options.
PrepareResult prepare_data(const PrepareOptions& options);

}  // namespace ffnshape
