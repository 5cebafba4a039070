#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "ffnshape/interop/hf.h"
#include "ffnshape/interop/imported_run.h"
#include "ffnshape/interop/safetensors.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/tokenizer.h"
#include "../common/text_file.h"
#include "hf_config.h"
#include "hf_names.h"

namespace fs = std::filesystem;

namespace ffnshape::interop {
namespace {

// tokenizer_config.json for transformers' LlamaTokenizer over our tokenizer.model: the special pieces
// by name, and no BOS / EOS added on encode, because ffnshape encodes text (data prepare, eval,
// generate) without them.
nlohmann::json hf_tokenizer_config(const Tokenizer& tok, int64_t max_seq_len) {
  nlohmann::json c = {{"tokenizer_class", "LlamaTokenizer"}, {"add_bos_token", false}, {"add_eos_token", false},
                      {"clean_up_tokenization_spaces", false}, {"legacy", false}, {"model_max_length", max_seq_len},
                      {"unk_token", tok.piece(tok.unk_id())}};
  if (tok.bos_id() >= 0) c["bos_token"] = tok.piece(tok.bos_id());
  if (tok.eos_id() >= 0) c["eos_token"] = tok.piece(tok.eos_id());
  if (tok.pad_id() >= 0) c["pad_token"] = tok.piece(tok.pad_id());
  return c;
}

}  // namespace

HfExportReport export_hf(const std::string& run, const std::string& out_dir, const HfExportOptions& options) {
  check_new_run_dir(out_dir);
  auto trained = load_trained_model(run);
  const auto& m = trained.config.model;
  const auto dtype = options.dtype == Precision::bf16 ? torch::kBFloat16 : torch::kFloat;

  HfExportReport report;
  report.checkpoint = trained.checkpoint;
  report.architecture = m.family == Family::olmo2 ? "Olmo2ForCausalLM" : "LlamaForCausalLM";
  report.not_stock = hf_extensions_needed(m);

  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  auto params = trained.model->named_parameters();
  for (const auto& n : hf_tensor_names(m)) tensors.emplace_back(n.hf, params[n.ours].detach().to(torch::kCPU, dtype));
  report.tensors = static_cast<int64_t>(tensors.size());

  int bos = -1, eos = -1, pad = -1;
  const std::string& tokenizer = trained.config.data.tokenizer;
  report.tokenizer_copied = !tokenizer.empty() && fs::is_regular_file(tokenizer);
  nlohmann::json tokenizer_config;
  const bool byte_level = fs::path(tokenizer).extension() == ".json";
  if (report.tokenizer_copied) {
    const auto tok = Tokenizer::load(tokenizer);
    bos = tok.bos_id(), eos = tok.eos_id(), pad = tok.pad_id();
    if (!byte_level) tokenizer_config = hf_tokenizer_config(tok, m.max_seq_len);
  }

  // Written under OUT.partial and renamed at the end: an interrupted export leaves no half folder.
  StagedFolder staged(out_dir);
  const fs::path& out = staged.path();
  write_safetensors((out / "model.safetensors").string(), tensors, {{"format", "pt"}});
  write_text_file((out / "config.json").string(),
                  hf_config_from_model(m, dtype == torch::kFloat ? "float32" : "bfloat16", bos, eos, pad).dump(2) + "\n");
  if (report.tokenizer_copied && byte_level) {
    // tokenizer.json travels with its companions; transformers reads the special tokens from them.
    if (fs::path(tokenizer).filename() == "tokenizer.json") {
      copy_hf_tokenizer_files(fs::path(tokenizer).parent_path().string(), out.string());
    } else {
      fs::copy_file(tokenizer, out / "tokenizer.json");
    }
  } else if (report.tokenizer_copied) {
    fs::copy_file(tokenizer, out / "tokenizer.model");
    write_text_file((out / "tokenizer_config.json").string(), tokenizer_config.dump(2) + "\n");
  }
  staged.commit();
  return report;
}

}  // namespace ffnshape::interop
