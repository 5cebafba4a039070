#include "tokenizer_choice.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "ffnshape/train/data_error.h"

namespace fs = std::filesystem;

namespace ffnshape::data {
namespace {

// data.tokenizer of RUN_DIR/config.yaml, relative paths tried from here and from the run folder.
std::string configured_tokenizer(const fs::path& run_dir) {
  const auto config = run_dir / "config.yaml";
  if (!fs::exists(config)) return "";
  try {
    const auto node = YAML::LoadFile(config.string())["data"]["tokenizer"];
    const auto path = node && node.IsScalar() ? node.as<std::string>() : std::string();
    if (path.empty()) return "";
    if (fs::is_regular_file(path)) return path;
    if (fs::is_regular_file(run_dir / path)) return (run_dir / path).string();
  } catch (const YAML::Exception&) {
  }
  return "";
}

}  // namespace

std::string resolve_tokenizer_path(const std::string& option) {
  if (fs::is_regular_file(option)) return option;
  if (!fs::is_directory(option)) {
    throw DataError("--tokenizer '" + option + "' does not exist\n  fix: give a .model file, a tokenizer.json or a run folder");
  }
  const fs::path run_dir(option);
  if (auto configured = configured_tokenizer(run_dir); !configured.empty()) return configured;
  for (const char* name : {"tokenizer.json", "tokenizer.model"}) {
    if (fs::is_regular_file(run_dir / name)) return (run_dir / name).string();
  }
  throw DataError("--tokenizer '" + option + "': the folder has no tokenizer (no data.tokenizer in config.yaml, "
                  "no tokenizer.json, no tokenizer.model)\n  fix: give the tokenizer file itself");
}

std::string tokenizer_kind(const std::string& path) {
  return fs::path(path).extension() == ".json" ? "huggingface" : "sentencepiece";
}

}  // namespace ffnshape::data
