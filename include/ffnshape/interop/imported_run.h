// A run directory for a model that was not trained here (an imported checkpoint): config.yaml and a
// complete checkpoint at step 0 with a fresh optimizer, so `ffnshape eval`, `profile` and `export`
// read it like any trained run, and `ffnshape train --run-dir` can continue from it.
#pragma once

#include <map>
#include <string>

#include "ffnshape/config/run_config.h"
#include "ffnshape/nn/model.h"

namespace ffnshape::interop {

// DataError unless `run_dir` is absent or an empty folder (an import never overwrites a run).
void check_new_run_dir(const std::string& run_dir);

// Writes config.yaml, checkpoints/step_00000000 (model, fresh optimizer, DONE) and source.json
// holding `provenance` (where the weights came from) into `run_dir`, which must be absent or empty.
// The importers write into a staging folder renamed into place at the end, so that config paths
// (data.tokenizer) name the final folder while an interrupted import leaves none.
void write_imported_run(const RunConfig& config, nn::TransformerLM& model, const std::string& run_dir,
                        const std::map<std::string, std::string>& provenance);

// Copies tokenizer.json and the files that complete it where present (tokenizer_config.json: the
// special tokens; special_tokens_map.json; chat_template.jinja) from one folder into another.
void copy_hf_tokenizer_files(const std::string& from_dir, const std::string& to_dir);

}  // namespace ffnshape::interop
