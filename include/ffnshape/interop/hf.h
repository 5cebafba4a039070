// Hugging Face model folders in and out (`ffnshape import` / `ffnshape export`).
//
// Import reads config.json (LlamaForCausalLM or Olmo2ForCausalLM) and model.safetensors or its
// shards, checks every tensor's name and shape against the model the config describes, and writes a
// run directory (interop/imported_run.h). Export writes config.json + model.safetensors: a stock
// Llama or OLMo-2 folder for conventional models; hourglass models in the hourglass paper's format
// and per-layer widths through the config key "ffnshape" (README, Import and export).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffnshape/config/run_config.h"

namespace ffnshape::interop {

struct HfImportOptions {
  Precision dtype = Precision::fp32;  // bf16: weights rounded to bf16 and train.precision bf16
                                      // (the checkpoint keeps ffnshape's fp32 master weights)
  int64_t max_seq_len = 0;            // > 0: shorter than max_position_embeddings (smaller RoPE tables)
};

struct HfImportReport {
  RunConfig config;                       // as written to RUN_DIR/config.yaml
  std::string architecture;
  int64_t tensors = 0, parameters = 0;
  size_t shards = 0;
  std::string tokenizer;                  // what happened to the tokenizer, in words
  std::vector<std::string> ignored_keys;  // config.json keys left aside
  double seconds = 0;                     // wall time of the whole import
};

// Problems with the folder (missing files, unsupported architecture or keys, tensors missing,
// unexpected or of the wrong shape) are DataErrors naming what is wrong; nothing is written then.
HfImportReport import_hf(const std::string& hf_dir, const std::string& run_dir, const HfImportOptions& options = {});

struct HfExportOptions {
  Precision dtype = Precision::fp32;  // the dtype of the safetensors tensors
};

struct HfExportReport {
  std::string architecture, checkpoint;
  int64_t tensors = 0;
  bool tokenizer_copied = false;
  std::vector<std::string> not_stock;  // why stock transformers cannot load it (empty: it can)
};

// `run` is a run directory (its newest complete checkpoint) or a checkpoint folder. `out_dir` must
// be absent or empty.
HfExportReport export_hf(const std::string& run, const std::string& out_dir, const HfExportOptions& options = {});

}  // namespace ffnshape::interop
