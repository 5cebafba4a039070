// ffnshape export RUN_DIR --out HF_DIR [--dtype fp32|bf16]
#include <iostream>

#include "commands.h"
#include "ffnshape/interop/hf.h"

namespace ffnshape::cli {
namespace {

struct ExportOptions {
  std::string run, out, dtype = "fp32";
};

int run_export(const ExportOptions& o) {
  interop::HfExportOptions options;
  options.dtype = o.dtype == "bf16" ? Precision::bf16 : Precision::fp32;
  const auto r = interop::export_hf(o.run, o.out, options);
  std::cout << "exported " << r.checkpoint << " to " << o.out << ": " << r.architecture << ", " << r.tensors
            << " tensors, " << o.dtype << (r.tokenizer_copied ? ", tokenizer.model copied" : ", no tokenizer") << "\n";
  if (r.not_stock.empty()) {
    std::cout << "  stock transformers loads it (AutoModelForCausalLM.from_pretrained)\n";
  } else {
    std::cout << "  stock transformers cannot load it:";
    for (const auto& why : r.not_stock) std::cout << "\n    " << why;
    std::cout << "\n  (the folder keeps every tensor; `ffnshape import` reads it back)\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* sub = app.add_subcommand("export", "A run's model -> a Hugging Face folder (config.json + model.safetensors)");
  sub->add_option("run", o->run, "Run directory or checkpoint folder")->required();
  sub->add_option("--out", o->out, "Folder to create (absent or empty)")->required();
  sub->add_option("--dtype", o->dtype, "Tensor dtype: fp32 (default) or bf16")->check(CLI::IsMember({"fp32", "bf16"}));
  return {sub, [o] { return run_export(*o); }};
}

}  // namespace ffnshape::cli
