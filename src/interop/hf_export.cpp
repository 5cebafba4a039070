#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "ffnshape/interop/hf.h"
#include "ffnshape/interop/imported_run.h"
#include "ffnshape/interop/safetensors.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/tokenizer.h"
#include "hf_config.h"
#include "hf_names.h"

namespace fs = std::filesystem;

namespace ffnshape::interop {

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
  if (report.tokenizer_copied) {
    const auto tok = Tokenizer::load(tokenizer);
    bos = tok.bos_id(), eos = tok.eos_id(), pad = tok.pad_id();
  }

  fs::create_directories(out_dir);
  const fs::path out(out_dir);
  write_safetensors((out / "model.safetensors").string(), tensors, {{"format", "pt"}});
  {
    std::ofstream config(out / "config.json");
    config << hf_config_from_model(m, dtype == torch::kFloat ? "float32" : "bfloat16", bos, eos, pad).dump(2) << "\n";
    if (!config) throw std::runtime_error("cannot write '" + (out / "config.json").string() + "'");
  }
  if (report.tokenizer_copied) fs::copy_file(tokenizer, out / "tokenizer.model");
  return report;
}

}  // namespace ffnshape::interop
