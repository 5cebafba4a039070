#include "ffnshape/interop/imported_run.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "../common/text_file.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/data_error.h"
#include "ffnshape/train/optimizer.h"

namespace fs = std::filesystem;

namespace ffnshape::interop {

void check_new_run_dir(const std::string& run_dir) { check_new_output_dir(run_dir); }

void write_imported_run(const RunConfig& config, nn::TransformerLM& model, const std::string& run_dir,
                        const std::map<std::string, std::string>& provenance) {
  check_new_run_dir(run_dir);
  fs::create_directories(run_dir);
  {
    std::ofstream out(fs::path(run_dir) / "config.yaml");
    out << to_yaml(config);
    std::ofstream source(fs::path(run_dir) / "source.json");
    source << nlohmann::json(provenance).dump(2) << "\n";
    if (!out || !source) throw std::runtime_error("cannot write into '" + run_dir + "'");
  }
  // A fresh optimizer (no moments yet) makes the checkpoint complete, so training can continue from it.
  auto optimizer = make_optimizer(model, config.optimizer, torch::kCPU);
  save_checkpoint(checkpoint_dir(run_dir, 0), model, *optimizer, TrainingState{});
}

void copy_hf_tokenizer_files(const std::string& from_dir, const std::string& to_dir) {
  for (const char* name : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja"}) {
    const auto from = fs::path(from_dir) / name;
    if (fs::is_regular_file(from)) fs::copy_file(from, fs::path(to_dir) / name, fs::copy_options::overwrite_existing);
  }
}

}  // namespace ffnshape::interop
