#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>

#include "ffnshape/interop/hf.h"
#include "ffnshape/interop/imported_run.h"
#include "ffnshape/interop/safetensors.h"
#include "ffnshape/train/data_error.h"
#include "ffnshape/train/tokenizer.h"
#include "../common/text_file.h"
#include "hf_config.h"
#include "hf_names.h"

namespace fs = std::filesystem;

namespace ffnshape::interop {
namespace {

HfModelConfig read_config(const fs::path& dir) {
  const auto path = dir / "config.json";
  if (!fs::is_regular_file(path)) {
    throw DataError("'" + path.string() + "' is missing\n  fix: give a Hugging Face model folder (config.json + model.safetensors)");
  }
  try {
    std::ifstream in(path);
    return model_config_from_hf(nlohmann::json::parse(in), path.string());
  } catch (const nlohmann::json::exception& e) {
    throw DataError("'" + path.string() + "' cannot be read: " + e.what() + "\n  fix: give a transformers config.json");
  }
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// "a, b, c and 4 more"
// Buffers some exporters save beside the weights; they are recomputed, never read.
bool is_derived_buffer(const std::string& name) { return name.find("rotary_emb.inv_freq") != std::string::npos; }

// Every expected tensor present with its shape, nothing left over: checked from the headers alone.
void check_tensors(const SafetensorsCheckpoint& ckpt, const std::vector<TensorName>& names, nn::TransformerLM& model,
                   const std::string& dir) {
  auto params = model->named_parameters();
  std::vector<std::string> missing, wrong, unexpected;
  std::set<std::string> expected;
  for (const auto& n : names) {
    expected.insert(n.hf);
    if (!ckpt.contains(n.hf)) {
      missing.push_back(n.hf);
      continue;
    }
    const auto& shape = ckpt.entry(n.hf).shape;
    const auto want = params[n.ours].sizes().vec();
    if (shape != want) wrong.push_back(n.hf + " is " + shape_text(shape) + " where the config implies " + shape_text(want));
    if (!c10::isFloatingType(ckpt.entry(n.hf).dtype)) wrong.push_back(n.hf + " is not a floating-point tensor");
  }
  const bool tied = model->config().tie_embeddings;
  for (const auto& name : ckpt.names()) {
    if (!expected.count(name) && !is_derived_buffer(name) && !(tied && name == "lm_head.weight")) unexpected.push_back(name);
  }
  std::string problems;
  if (!missing.empty()) problems += "\n  missing tensors: " + first_names(missing);
  if (!wrong.empty()) problems += "\n  wrong shapes: " + first_names(wrong);
  if (!unexpected.empty()) problems += "\n  tensors that map to nothing in the model: " + first_names(unexpected);
  if (!problems.empty()) {
    throw DataError("the weights in '" + dir + "' do not fit the model its config.json describes:" + problems +
                    "\n  fix: give the folder's own config.json, or a folder of a supported architecture");
  }
}

void copy_weights(const SafetensorsCheckpoint& ckpt, const std::vector<TensorName>& names, nn::TransformerLM& model) {
  torch::NoGradGuard no_grad;
  auto params = model->named_parameters();
  for (const auto& n : names) params[n.ours].copy_(ckpt.tensor(n.hf));
  if (model->config().tie_embeddings && ckpt.contains("lm_head.weight") &&
      !torch::equal(ckpt.tensor("lm_head.weight").to(torch::kFloat), model->tok_embeddings->weight)) {
    throw DataError("'" + ckpt.file_of("lm_head.weight") + "' holds an lm_head.weight that differs from the embeddings, "
                    "but config.json ties them\n  fix: set tie_word_embeddings to false in config.json");
  }
}

// tokenizer.model (SentencePiece) is kept with the run, else tokenizer.json (byte-level BPE) with the
// files beside it. A tokenizer.json ffnshape cannot encode exactly leaves the model importable, and
// the report says why.
std::string find_tokenizer(const fs::path& dir, RunConfig& config, const std::string& run_dir) {
  if (fs::is_regular_file(dir / "tokenizer.model")) {
    Tokenizer::load((dir / "tokenizer.model").string());  // a DataError here when it is not SentencePiece
    config.data.tokenizer = (fs::absolute(run_dir) / "tokenizer.model").string();
    return "tokenizer.model (SentencePiece), copied; data.tokenizer points at it";
  }
  if (fs::is_regular_file(dir / "tokenizer.json")) {
    try {
      const auto tokens = Tokenizer::load((dir / "tokenizer.json").string()).vocab_size();
      if (tokens > config.model.vocab_size) {
        return "tokenizer.json: not kept: its " + std::to_string(tokens) + " tokens exceed the model's " +
               std::to_string(config.model.vocab_size) + " embedding rows";
      }
    } catch (const DataError& e) {
      return std::string("tokenizer.json: not kept: ") + e.what();
    }
    config.data.tokenizer = (fs::absolute(run_dir) / "tokenizer.json").string();
    return "tokenizer.json (Hugging Face byte-level BPE), copied with its companion files; data.tokenizer points at it";
  }
  return "none in the folder";
}

}  // namespace

HfImportReport import_hf(const std::string& hf_dir, const std::string& run_dir, const HfImportOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path dir(hf_dir);
  check_new_run_dir(run_dir);
  auto spec = read_config(dir);
  auto& m = spec.model;
  if (options.max_seq_len > 0) m.max_seq_len = options.max_seq_len;
  const SafetensorsCheckpoint ckpt(hf_dir);
  const auto names = hf_tensor_names(m);

  HfImportReport report;
  report.architecture = spec.architecture;
  report.ignored_keys = spec.ignored_keys;
  report.shards = ckpt.shard_count();
  report.config.model = m;
  report.config.train.seq_len = std::min<int64_t>(report.config.train.seq_len, m.max_seq_len);
  report.config.train.precision = options.dtype;
  report.tokenizer = find_tokenizer(dir, report.config, run_dir);

  nn::TransformerLM model(m);
  check_tensors(ckpt, names, model, hf_dir);
  copy_weights(ckpt, names, model);
  if (options.dtype == Precision::bf16) {
    // Checkpoints hold fp32 master weights; bf16 means bf16 values and bf16 compute (train.precision).
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.copy_(p.to(torch::kBFloat16));
  }
  report.tensors = static_cast<int64_t>(names.size());
  report.parameters = model->num_parameters();
  StagedFolder staged(run_dir);  // renamed into place when complete
  write_imported_run(report.config, model, staged.path().string(),
                     {{"format", "huggingface"},
                      {"source", fs::absolute(dir).string()},
                      {"architecture", spec.architecture},
                      {"dtype", to_string(options.dtype)},
                      {"tokenizer", report.tokenizer}});
  const auto kept = fs::path(report.config.data.tokenizer).filename();
  if (kept == "tokenizer.model") fs::copy_file(dir / kept, staged.path() / kept);
  if (kept == "tokenizer.json") copy_hf_tokenizer_files(dir.string(), staged.path().string());
  staged.commit();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ffnshape::interop
