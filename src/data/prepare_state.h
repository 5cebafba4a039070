// Internal: how far a prepare has come, saved in OUT_DIR/.prepare-state.json at resume points so a
// killed prepare continues instead of starting over. The fingerprint (inputs, their sizes and times,
// every option that changes the output) decides whether a saved state belongs to this call.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ffnshape/data/prepare.h"

namespace ffnshape::data {

struct SplitProgress {
  int shards = 0;         // completed shard files
  int64_t in_shard = 0;   // tokens of the partial shard
  int64_t tokens = 0;
  int64_t documents = 0;
};

struct PrepareState {
  nlohmann::json fingerprint;
  uint64_t documents = 0;  // in the corpus, bad ones included (the split's N)
  std::string tokenizer_path, tokenizer_hash;
  uint64_t position = 0;   // corpus entries consumed
  uint64_t ordinal = 0;    // documents consumed
  SplitProgress train, val;
  int64_t skipped_documents = 0, skipped_files = 0, duplicates = 0;
  uint64_t dedup_hashes = 0;
  bool max_tokens_reached = false;
  std::vector<std::string> val_origins;  // the first validation documents, for meta.json
  std::vector<std::string> skipped_examples;
};

nlohmann::json make_fingerprint(const PrepareOptions& options, const std::vector<CorpusFile>& files);

// The saved state when it exists and matches the fingerprint; otherwise nothing (saying why, unless quiet).
std::optional<PrepareState> load_state(const std::string& path, const nlohmann::json& fingerprint, bool quiet);
// Atomically (temporary file, then rename).
void save_state(const std::string& path, const PrepareState& state);

}  // namespace ffnshape::data
