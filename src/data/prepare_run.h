// Internal: the parts of one `data prepare` shared by its translation units.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "ffnshape/data/prepare.h"
#include "ffnshape/train/tokenizer.h"
#include "prepare_state.h"

namespace ffnshape::data {

struct PrepareRun {
  const PrepareOptions& options;
  std::filesystem::path out;
  std::vector<CorpusFile> files;
  PrepareState state;
  std::vector<bool> is_val;  // by document ordinal
  int threads = 1;

  std::string state_path() const { return (out / ".prepare-state.json").string(); }
  std::string dedup_log_path() const { return (out / ".prepare-dedup.bin").string(); }
};

// A bad entry: DataError naming it, or (with --skip-bad) counted, with the first few kept as examples.
void handle_bad_entry(PrepareRun& run, const CorpusEntry& entry);

// The tokenizer given, or one trained on the training documents (state.tokenizer_* are set).
Tokenizer choose_tokenizer(PrepareRun& run);

// Writes meta.json (atomically) and fills the result.
PrepareResult write_meta(const PrepareRun& run, const Tokenizer& tokenizer, const std::vector<std::string>& shards);

}  // namespace ffnshape::data
