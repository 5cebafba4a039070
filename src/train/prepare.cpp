#include "ffnshape/train/prepare.h"

#include "../common/log.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "ffnshape/config/config_error.h"
#include "ffnshape/train/data_error.h"
#include "ffnshape/train/loader.h"
#include "ffnshape/train/tokenizer.h"

namespace fs = std::filesystem;

namespace ffnshape {
namespace {

std::vector<std::string> list_documents(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const auto& input : inputs) {
    if (fs::is_regular_file(input)) {
      files.push_back(input);
    } else if (fs::is_directory(input)) {
      for (const auto& entry : fs::recursive_directory_iterator(input)) {
        const auto name = entry.path().filename().string();
        if (entry.is_regular_file() && name[0] != '.' && entry.path().extension() == ".txt") {
          files.push_back(entry.path().string());
        }
      }
    } else {
      throw DataError("input '" + input + "' does not exist\n  fix: pass text files or folders of .txt files");
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) throw DataError("no documents found in the inputs\n  fix: folders must hold .txt files");
  return files;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// FNV-1a 64 of a file: a cheap checksum recorded in meta.json to detect corrupted shards.
std::string fnv1a64(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t hash = 1469598103934665603ULL;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 1099511628211ULL;
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// Encodes documents and writes them as shards named PREFIX_000000.bin, ...; returns the token count.
int64_t write_split(const std::vector<std::string>& documents, const Tokenizer& tokenizer, const std::string& prefix,
                    const PrepareOptions& options, int threads, std::vector<std::string>& shards) {
  std::vector<uint32_t> buffer;
  int64_t total = 0;
  int index = 0;
  auto flush = [&] {
    if (buffer.empty()) return;
    char name[32];
    std::snprintf(name, sizeof name, "_%06d.bin", index++);
    const auto path = (fs::path(options.out_dir) / (prefix + name)).string();
    write_shard(path, buffer, tokenizer.vocab_size());
    shards.push_back(path);
    buffer.clear();
  };
  const size_t chunk = 256;  // documents encoded together across threads
  const auto start = std::chrono::steady_clock::now();
  for (size_t first = 0; first < documents.size(); first += chunk) {
    std::vector<std::string> texts;
    for (size_t i = first; i < std::min(documents.size(), first + chunk); ++i) texts.push_back(read_text(documents[i]));
    for (auto& ids : tokenizer.encode_batch(texts, threads)) {
      ids.push_back(static_cast<uint32_t>(tokenizer.eos_id()));
      total += static_cast<int64_t>(ids.size());
      for (auto id : ids) {
        buffer.push_back(id);
        if (static_cast<int64_t>(buffer.size()) >= options.shard_tokens) flush();
      }
    }
    if (!options.quiet && documents.size() > chunk) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      log::info("{}: {}/{} documents, {} tokens, {:.0f} tokens/s", prefix, std::min(documents.size(), first + chunk),
                   documents.size(), total, static_cast<double>(total) / std::max(s, 1e-9));
    }
  }
  flush();
  return total;
}

}  // namespace

PrepareResult prepare_data(const PrepareOptions& options) {
  if (!(options.val_fraction >= 0 && options.val_fraction < 1)) {
    throw ConfigError("--val-fraction", "must be in [0, 1)", "e.g. 0.05 for 5% of the documents");
  }
  if (options.shard_tokens < 1) throw ConfigError("--shard-tokens", "must be positive", "e.g. 100000000");
  if (options.out_dir.empty()) throw ConfigError("--out", "is empty", "give the output folder");
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  auto documents = list_documents(options.inputs);
  std::mt19937_64 generator(options.seed);
  std::shuffle(documents.begin(), documents.end(), generator);
  auto n_val = static_cast<size_t>(std::llround(options.val_fraction * static_cast<double>(documents.size())));
  if (options.val_fraction > 0 && n_val == 0 && documents.size() > 1) n_val = 1;
  if (n_val >= documents.size()) {
    throw DataError("only " + std::to_string(documents.size()) + " document(s): nothing would be left to train on\n"
                    "  fix: lower --val-fraction or add documents");
  }
  std::vector<std::string> val(documents.begin(), documents.begin() + static_cast<std::ptrdiff_t>(n_val));
  std::vector<std::string> train(documents.begin() + static_cast<std::ptrdiff_t>(n_val), documents.end());
  std::sort(val.begin(), val.end());
  std::sort(train.begin(), train.end());

  fs::create_directories(options.out_dir);
  PrepareResult result;
  result.tokenizer_path = options.tokenizer;
  Tokenizer tokenizer = [&] {
    if (!options.tokenizer.empty()) return Tokenizer::load(options.tokenizer);
    const auto prefix = (fs::path(options.out_dir) / "tokenizer").string();
    if (!options.quiet) log::info("training a {}-token BPE tokenizer on {} documents", options.vocab_size, train.size());
    result.tokenizer_path = prefix + ".model";
    return Tokenizer::train(train, prefix, options.vocab_size, threads);
  }();
  result.vocab_size = tokenizer.vocab_size();

  result.train_tokens = write_split(train, tokenizer, "train", options, threads, result.shards);
  if (!val.empty()) result.val_tokens = write_split(val, tokenizer, "val", options, threads, result.shards);
  result.train_documents = static_cast<int64_t>(train.size());
  result.val_documents = static_cast<int64_t>(val.size());

  nlohmann::json shards = nlohmann::json::array();
  for (const auto& path : result.shards) {
    shards.push_back({{"file", fs::path(path).filename().string()}, {"tokens", Shard(path).size()}, {"fnv1a64", fnv1a64(path)}});
  }
  const nlohmann::json meta = {{"tokenizer", result.tokenizer_path},
                               {"vocab_size", result.vocab_size},
                               {"eos_id", tokenizer.eos_id()},
                               {"documents", {{"train", result.train_documents}, {"val", result.val_documents}}},
                               {"tokens", {{"train", result.train_tokens}, {"val", result.val_tokens}}},
                               {"val_fraction", options.val_fraction},
                               {"seed", options.seed},
                               {"val_documents", val},
                               {"shards", shards}};
  std::ofstream(fs::path(options.out_dir) / "meta.json") << meta.dump(2) << "\n";
  return result;
}

}  // namespace ffnshape
