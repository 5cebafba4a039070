// Internal: which tokenizer a prepare uses, and the text a new one is trained on.
#pragma once

#include <string>
#include <vector>

#include "ffnshape/data/corpus.h"

namespace ffnshape::data {

// --tokenizer as a file: FILE.model or tokenizer.json as given; a run folder: the data.tokenizer of
// its config.yaml when that file exists, else RUN_DIR/tokenizer.json, else RUN_DIR/tokenizer.model.
// DataError when none of them exists.
std::string resolve_tokenizer_path(const std::string& option);

// "huggingface" for a .json file, else "sentencepiece".
std::string tokenizer_kind(const std::string& path);

// At most this much text of the training documents goes into the file a tokenizer is trained on
// when the corpus is not plain .txt files.
constexpr size_t kTokenizerTrainingBytes = size_t{200} << 20;

}  // namespace ffnshape::data
