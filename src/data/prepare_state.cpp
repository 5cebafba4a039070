#include "prepare_state.h"

#include <filesystem>
#include <fstream>

#include "../common/log.h"
#include "../common/text_file.h"
#include "dedup_set.h"

namespace fs = std::filesystem;

namespace ffnshape::data {
namespace {

constexpr int kStateVersion = 1;

nlohmann::json to_json(const SplitProgress& s) {
  return {{"shards", s.shards}, {"in_shard", s.in_shard}, {"tokens", s.tokens}, {"documents", s.documents}};
}

SplitProgress split_from(const nlohmann::json& j) {
  return {j.at("shards").get<int>(), j.at("in_shard").get<int64_t>(), j.at("tokens").get<int64_t>(),
          j.at("documents").get<int64_t>()};
}

}  // namespace

nlohmann::json make_fingerprint(const PrepareOptions& o, const std::vector<CorpusFile>& files) {
  uint64_t hash = fnv1a64("");
  for (const auto& file : files) {
    std::error_code error;
    const auto time = fs::last_write_time(file.path, error).time_since_epoch().count();
    hash = fnv1a64(file.path + '\0' + std::to_string(file.bytes) + '\0' + std::to_string(time) + '\n', hash);
  }
  return {{"version", kStateVersion}, {"files", files.size()}, {"files_fnv1a64", hash},
          {"format", to_string(o.format)}, {"text_field", o.text_field}, {"vocab_size", o.vocab_size},
          {"tokenizer", o.tokenizer}, {"tokenizer_fnv1a64", o.tokenizer.empty() ? "" : file_fnv1a64(o.tokenizer)},
          {"val_fraction", o.val_fraction}, {"seed", o.seed}, {"shard_tokens", o.shard_tokens},
          {"max_tokens", o.max_tokens}, {"dedup", o.dedup}, {"skip_bad", o.skip_bad}};
}

std::optional<PrepareState> load_state(const std::string& path, const nlohmann::json& fingerprint, bool quiet) {
  if (!fs::exists(path)) return std::nullopt;
  try {
    std::ifstream in(path);
    const auto j = nlohmann::json::parse(in);
    if (j.at("fingerprint") != fingerprint) {
      if (!quiet) log::warn("{} belongs to a prepare of other inputs or options: starting over", path);
      return std::nullopt;
    }
    PrepareState s;
    s.fingerprint = fingerprint;
    s.documents = j.at("documents").get<uint64_t>();
    s.tokenizer_path = j.at("tokenizer").get<std::string>();
    s.tokenizer_hash = j.at("tokenizer_fnv1a64").get<std::string>();
    s.position = j.at("position").get<uint64_t>();
    s.ordinal = j.at("ordinal").get<uint64_t>();
    s.train = split_from(j.at("train"));
    s.val = split_from(j.at("val"));
    s.skipped_documents = j.at("skipped_documents").get<int64_t>();
    s.skipped_files = j.at("skipped_files").get<int64_t>();
    s.duplicates = j.at("duplicates").get<int64_t>();
    s.dedup_hashes = j.at("dedup_hashes").get<uint64_t>();
    s.max_tokens_reached = j.at("max_tokens_reached").get<bool>();
    s.val_origins = j.at("val_origins").get<std::vector<std::string>>();
    s.skipped_examples = j.at("skipped_examples").get<std::vector<std::string>>();
    return s;
  } catch (const std::exception& e) {
    if (!quiet) log::warn("{} cannot be read ({}): starting over", path, e.what());
    return std::nullopt;
  }
}

void save_state(const std::string& path, const PrepareState& s) {
  const nlohmann::json j = {{"fingerprint", s.fingerprint}, {"documents", s.documents},
                            {"tokenizer", s.tokenizer_path}, {"tokenizer_fnv1a64", s.tokenizer_hash},
                            {"position", s.position}, {"ordinal", s.ordinal},
                            {"train", to_json(s.train)}, {"val", to_json(s.val)},
                            {"skipped_documents", s.skipped_documents}, {"skipped_files", s.skipped_files},
                            {"duplicates", s.duplicates}, {"dedup_hashes", s.dedup_hashes},
                            {"max_tokens_reached", s.max_tokens_reached}, {"val_origins", s.val_origins},
                            {"skipped_examples", s.skipped_examples}};
  write_text_file(path, j.dump());
}

}  // namespace ffnshape::data
