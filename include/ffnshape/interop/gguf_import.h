// GGUF files of the llama architecture into a run directory (`ffnshape import FILE.gguf`): the model
// from the llama.* metadata, every tensor dequantized (interop/gguf.h) and renamed, the q and k
// projections' rows put back from llama.cpp's adjacent-pair RoPE order into the half-split order
// ffnshape (and Hugging Face) use.
#pragma once

#include <string>

#include "ffnshape/interop/hf.h"

namespace ffnshape::interop {

// DataError for another architecture, missing metadata, tensors that are missing, of the wrong shape
// or left over (all named), and what ffnshape cannot represent (rope_freqs, i.e. llama3 scaling
// stored as a tensor). An embedded llama-type (SentencePiece) vocabulary becomes the run's
// tokenizer.model, a gpt2-type (byte-level BPE) one tokenizer.json with tokenizer_config.json (special
// tokens, chat template): data.tokenizer names it. Other types, or a gpt2 vocabulary whose
// pre-tokenizer ffnshape does not know, are not kept, and the report says so (prompts then go in as
// token ids).
HfImportReport import_gguf(const std::string& path, const std::string& run_dir, const HfImportOptions& options = {});

}  // namespace ffnshape::interop
