// Which files a list of inputs names, and in which format each is read.
#include <glob.h>

#include <algorithm>
#include <filesystem>

#include "byte_stream.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/data/corpus.h"
#include "ffnshape/train/data_error.h"

namespace fs = std::filesystem;

namespace ffnshape {
namespace {

// The format an extension names (after any .gz / .zst), or automatic when it names none.
CorpusFormat format_of_name(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (data::compression_of(name) != data::Compression::none) name = fs::path(name).stem().string();
  const auto extension = fs::path(name).extension().string();
  if (extension == ".txt") return CorpusFormat::text;
  if (extension == ".jsonl" || extension == ".ndjson") return CorpusFormat::jsonl;
  if (extension == ".parquet" || extension == ".pq") return CorpusFormat::parquet;
  return CorpusFormat::automatic;
}

CorpusFile resolve(const std::string& path, CorpusFormat requested) {
  CorpusFile file{path, requested, 0};
  if (file.format == CorpusFormat::automatic) {
    file.format = format_of_name(path);
    if (file.format == CorpusFormat::automatic) file.format = CorpusFormat::text;  // any named file is a text document
  }
  if (file.format == CorpusFormat::parquet && data::compression_of(path) != data::Compression::none) {
    throw DataError(path + ": a Parquet file cannot be gzip- or zstd-compressed as a whole\n"
                    "  fix: decompress it (Parquet compresses its pages itself)");
  }
  std::error_code error;
  file.bytes = fs::file_size(path, error);
  return file;
}

void add_folder(const fs::path& folder, CorpusFormat requested, std::vector<CorpusFile>& files) {
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const auto name = entry.path().filename().string();
    if (!entry.is_regular_file() || name[0] == '.') continue;
    const auto format = format_of_name(name);
    if (format == CorpusFormat::automatic) continue;
    if (requested != CorpusFormat::automatic && format != requested) continue;
    files.push_back(resolve(entry.path().string(), format));
  }
}

std::vector<std::string> expand_pattern(const std::string& pattern) {
  glob_t matches{};
  std::vector<std::string> paths;
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  return paths;
}

void add_input(const std::string& input, CorpusFormat requested, std::vector<CorpusFile>& files) {
  if (fs::is_directory(input)) {
    add_folder(input, requested, files);
  } else if (fs::exists(input)) {
    files.push_back(resolve(input, requested));
  } else if (input.find_first_of("*?[") != std::string::npos) {
    const auto paths = expand_pattern(input);
    if (paths.empty()) throw DataError("input '" + input + "' matches no file\n  fix: check the pattern");
    for (const auto& path : paths) add_input(path, requested, files);
  } else {
    throw DataError("input '" + input + "' does not exist\n  fix: pass files, folders or globs of the corpus");
  }
}

}  // namespace

CorpusFormat parse_corpus_format(const std::string& name) {
  if (name == "auto") return CorpusFormat::automatic;
  if (name == "text") return CorpusFormat::text;
  if (name == "jsonl") return CorpusFormat::jsonl;
  if (name == "parquet") return CorpusFormat::parquet;
  throw ConfigError("--format", "'" + name + "' is not a corpus format", "use auto, text, jsonl or parquet");
}

const char* to_string(CorpusFormat format) {
  switch (format) {
    case CorpusFormat::text: return "text";
    case CorpusFormat::jsonl: return "jsonl";
    case CorpusFormat::parquet: return "parquet";
    default: return "auto";
  }
}

std::vector<CorpusFile> list_corpus_files(const std::vector<std::string>& inputs, CorpusFormat format) {
  std::vector<CorpusFile> files;
  for (const auto& input : inputs) add_input(input, format, files);
  auto by_path = [](const CorpusFile& a, const CorpusFile& b) { return a.path < b.path; };
  std::sort(files.begin(), files.end(), by_path);
  files.erase(std::unique(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path == b.path; }),
              files.end());
  if (files.empty()) {
    throw DataError("no documents found in the inputs\n"
                    "  fix: folders must hold .txt, .jsonl / .ndjson or .parquet files (.gz / .zst for the first two)");
  }
  return files;
}

}  // namespace ffnshape
