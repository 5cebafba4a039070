// ffnshape import (HF_DIR | FILE.gguf) --out RUN_DIR [--dtype fp32|bf16] [--max-seq-len N]
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "ffnshape/interop/gguf_import.h"
#include "ffnshape/interop/hf.h"
#include "ffnshape/train/data_error.h"
#include "format.h"

namespace fs = std::filesystem;

namespace ffnshape::cli {
namespace {

struct ImportOptions {
  std::string source, out, dtype = "fp32";
  int64_t max_seq_len = 0;
};

int run_import(const ImportOptions& o) {
  const bool gguf = fs::path(o.source).extension() == ".gguf";
  if (!gguf && !fs::is_directory(o.source)) {
    throw DataError("'" + o.source + "' is neither a folder nor a .gguf file\n"
                    "  fix: give a Hugging Face model folder (config.json + model.safetensors) or a GGUF file");
  }
  interop::HfImportOptions options;
  options.dtype = o.dtype == "bf16" ? Precision::bf16 : Precision::fp32;
  options.max_seq_len = o.max_seq_len;
  const auto r = gguf ? interop::import_gguf(o.source, o.out, options) : interop::import_hf(o.source, o.out, options);
  std::cout << "imported " << r.architecture << " from " << o.source << ": " << r.tensors << " tensors, "
            << with_commas(r.parameters) << " parameters, " << (gguf ? "1 GGUF file" : std::to_string(r.shards) + " safetensors file(s)")
            << ", " << o.dtype << ", in "
            << r.seconds << " s\n  model: " << describe_shape(r.config.model) << "\n  tokenizer: " << r.tokenizer << "\n";
  if (!r.ignored_keys.empty()) {
    std::cout << "  config.json keys left aside (they do not change the logits):";
    for (const auto& key : r.ignored_keys) std::cout << " " << key;
    std::cout << "\n";
  }
  std::cout << "  run directory: " << o.out << "\n";
  return kExitOk;
}

}  // namespace

Subcommand add_import_command(CLI::App& app) {
  auto o = std::make_shared<ImportOptions>();
  auto* sub = app.add_subcommand("import", "Hugging Face model folder or GGUF file -> a run directory");
  sub->add_option("source", o->source, "Hugging Face folder (config.json + model.safetensors or shards), or FILE.gguf")->required();
  sub->add_option("--out", o->out, "Run directory to create (absent or empty)")->required();
  sub->add_option("--dtype", o->dtype, "fp32 (default), or bf16: weights rounded to bf16, train.precision bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  sub->add_option("--max-seq-len", o->max_seq_len, "Cap the context (default max_position_embeddings)")
      ->check(CLI::PositiveNumber);
  return {sub, [o] { return run_import(*o); }};
}

}  // namespace ffnshape::cli
