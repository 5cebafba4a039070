// meta.json: what a prepare made, from what, with which tokenizer; written last and atomically.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "../common/text_file.h"
#include "dedup_set.h"
#include "prepare_run.h"
#include "tokenizer_choice.h"

namespace fs = std::filesystem;

namespace ffnshape::data {
namespace {

int64_t shard_token_count(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[12] = {};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  return static_cast<int64_t>(header[8] | header[9] << 8 | header[10] << 16 | static_cast<uint32_t>(header[11]) << 24);
}

nlohmann::json sources(const PrepareRun& run) {
  uint64_t bytes = 0;
  std::set<std::string> formats;
  for (const auto& file : run.files) {
    bytes += file.bytes;
    formats.insert(to_string(file.format));
  }
  return {{"inputs", run.options.inputs}, {"files", run.files.size()}, {"bytes", bytes},
          {"formats", formats}, {"text_field", run.options.text_field}};
}

}  // namespace

PrepareResult write_meta(const PrepareRun& run, const Tokenizer& tokenizer, const std::vector<std::string>& shards) {
  const auto& s = run.state;
  PrepareResult result;
  result.train_documents = s.train.documents;
  result.val_documents = s.val.documents;
  result.train_tokens = s.train.tokens;
  result.val_tokens = s.val.tokens;
  result.skipped_documents = s.skipped_documents;
  result.skipped_files = s.skipped_files;
  result.duplicate_documents = s.duplicates;
  result.vocab_size = tokenizer.vocab_size();
  result.tokenizer_path = s.tokenizer_path;
  result.shards = shards;

  nlohmann::json shard_list = nlohmann::json::array();
  for (const auto& path : shards) {
    shard_list.push_back({{"file", fs::path(path).filename().string()}, {"tokens", shard_token_count(path)},
                          {"fnv1a64", file_fnv1a64(path)}});
  }
  const nlohmann::json meta = {
      {"tokenizer", s.tokenizer_path},
      {"tokenizer_kind", tokenizer_kind(s.tokenizer_path)},
      {"tokenizer_fnv1a64", s.tokenizer_hash},
      {"vocab_size", result.vocab_size},
      {"eos_id", tokenizer.eos_id()},
      {"documents", {{"train", s.train.documents}, {"val", s.val.documents}}},
      {"tokens", {{"train", s.train.tokens}, {"val", s.val.tokens}}},
      {"val_fraction", run.options.val_fraction},
      {"seed", run.options.seed},
      {"val_documents", s.val_origins},
      {"val_documents_truncated", static_cast<int64_t>(s.val_origins.size()) < s.val.documents},
      {"shards", shard_list},
      {"sources", sources(run)},
      {"corpus_documents", s.documents},
      {"skipped", {{"documents", s.skipped_documents}, {"files", s.skipped_files}, {"examples", s.skipped_examples}}},
      {"dedup", run.options.dedup},
      {"duplicate_documents", s.duplicates},
      {"max_tokens", run.options.max_tokens},
      {"max_tokens_reached", s.max_tokens_reached}};
  write_text_file((run.out / "meta.json").string(), meta.dump(2) + "\n");
  return result;
}

}  // namespace ffnshape::data
