// Readers of tokenizer.json's pipeline sections (hf_pipeline_json.cpp).
#pragma once

#include "hf_json_fields.h"
#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {

struct PostProcessorIds {
  std::vector<uint32_t> prefix, suffix;
  bool templated = false;
};

void read_normalizer(const JsonFields& f, const json& root, Normalizer& out);
std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonFields& f, const json& root);
void read_post_processor(const JsonFields& f, const json& value, const std::string& path, PostProcessorIds& out);
void check_decoder(const JsonFields& f, const json& root);
void check_no_truncation_or_padding(const JsonFields& f, const json& root);

}  // namespace ffnshape::hf
