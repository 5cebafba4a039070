// tokenizer.json's normalizer, pre_tokenizer, post_processor and decoder: what byte-level BPE files
// use is read; anything else is refused by name (never approximated).
#include "hf_pipeline_json.h"

namespace ffnshape::hf {
namespace {

constexpr const char* kOnlyByteLevel =
    "ffnshape reads byte-level BPE tokenizers (GPT-2, Llama 3, Qwen2, SmolLM2 style); see docs/data.md";

void read_normalizer(const JsonFields& f, const json& value, const std::string& path, Normalizer& out) {
  if (value.is_null()) return;
  const std::string type = f.type(value, path);
  if (type == "Sequence") {
    const json& list = f.required(value, "normalizers", path);
    f.expect(list.is_array(), join_path(path, "normalizers"), "a list", list);
    for (size_t i = 0; i < list.size(); ++i) {
      read_normalizer(f, list[i], join_path(path, "normalizers") + "[" + std::to_string(i) + "]", out);
    }
    return;
  }
  static const std::pair<const char*, Normalizer::Form> forms[] = {{"NFC", Normalizer::Form::kNfc},
                                                                   {"NFD", Normalizer::Form::kNfd},
                                                                   {"NFKC", Normalizer::Form::kNfkc},
                                                                   {"NFKD", Normalizer::Form::kNfkd}};
  for (const auto& [name, form] : forms) {
    if (type == name) return out.add(form);
  }
  throw f.unsupported(join_path(path, "type"), type, "supported normalizers: NFC, NFD, NFKC, NFKD and Sequence of them");
}

SplitStep read_split(const JsonFields& f, const json& value, const std::string& path) {
  const json& pattern = f.required(value, "pattern", path);
  const std::string pattern_path = join_path(path, "pattern");
  f.expect(pattern.is_object() && pattern.size() == 1, pattern_path, "{\"Regex\": ...} or {\"String\": ...}", pattern);
  const bool literal = pattern.contains("String");
  if (!literal && !pattern.contains("Regex")) {
    throw f.unsupported(pattern_path, pattern, "use {\"Regex\": ...} or {\"String\": ...}");
  }
  const std::string text = f.string(pattern, literal ? "String" : "Regex", pattern_path);
  const std::string behavior = f.string(value, "behavior", path);
  if (behavior != "Isolated" && behavior != "Removed") {
    throw f.unsupported(join_path(path, "behavior"), behavior, "supported Split behaviors: Isolated, Removed");
  }
  if (f.boolean(value, "invert", path, false)) {
    throw f.unsupported(join_path(path, "invert"), true, "only invert: false is supported");
  }
  return {Regex(text, f.origin() + ": " + join_path(pattern_path, literal ? "String" : "Regex"), literal),
          behavior == "Isolated"};
}

void read_byte_level(const JsonFields& f, const json& value, const std::string& path, PreTokenizer& out) {
  out.add_prefix_space = f.boolean(value, "add_prefix_space", path, true);
  if (f.boolean(value, "use_regex", path, true)) out.byte_level_regex = std::make_unique<Regex>(kGpt2SplitPattern, "GPT-2 pattern");
}

// One pre-tokenizer; *byte_level_seen says a ByteLevel came already (it must come last).
void read_pre_tokenizer(const JsonFields& f, const json& value, const std::string& path, PreTokenizer& out,
                        bool* byte_level_seen) {
  const std::string type = f.type(value, path);
  if (type == "Sequence") {
    const json& list = f.required(value, "pretokenizers", path);
    f.expect(list.is_array(), join_path(path, "pretokenizers"), "a list", list);
    for (size_t i = 0; i < list.size(); ++i) {
      read_pre_tokenizer(f, list[i], join_path(path, "pretokenizers") + "[" + std::to_string(i) + "]", out,
                         byte_level_seen);
    }
    return;
  }
  if (*byte_level_seen) {
    throw f.unsupported(path, value, "ByteLevel must be the last pre-tokenizer (as in GPT-2, Llama 3 and Qwen2 files)");
  }
  if (type == "ByteLevel") {
    read_byte_level(f, value, path, out);
    *byte_level_seen = true;
  } else if (type == "Split") {
    out.splits.push_back(read_split(f, value, path));
  } else if (type == "Digits") {
    const bool individual = f.boolean(value, "individual_digits", path, false);
    out.splits.push_back({Regex(individual ? "\\p{N}" : "\\p{N}+", "Digits"), true});  // Rust's char::is_numeric
  } else {
    throw f.unsupported(join_path(path, "type"), type,
                        "supported pre-tokenizers: ByteLevel, Split (Isolated or Removed), Digits and Sequence "
                        "of them; " + std::string(kOnlyByteLevel));
  }
}

// The ids a TemplateProcessing "single" template puts before and after the text.
void read_template(const JsonFields& f, const json& value, const std::string& path, PostProcessorIds& out) {
  const json& single = f.required(value, "single", path);
  const json& specials = f.required(value, "special_tokens", path);
  f.expect(single.is_array(), join_path(path, "single"), "a list", single);
  bool text_seen = false;
  for (size_t i = 0; i < single.size(); ++i) {
    const std::string item = join_path(path, "single") + "[" + std::to_string(i) + "]";
    const json& piece = single[i];
    f.expect(piece.is_object() && piece.size() == 1, item, "{\"SpecialToken\": ...} or {\"Sequence\": ...}", piece);
    if (piece.contains("Sequence")) {
      if (text_seen || f.string(piece["Sequence"], "id", join_path(item, "Sequence")) != "A") {
        throw f.unsupported(item, piece, "a single-sequence template holds sequence A once");
      }
      text_seen = true;
      continue;
    }
    const std::string name = f.string(f.required(piece, "SpecialToken", item), "id", join_path(item, "SpecialToken"));
    const std::string special_path = join_path(path, "special_tokens") + "." + name;
    const json& ids = f.required(f.required(specials, name, join_path(path, "special_tokens")), "ids", special_path);
    f.expect(ids.is_array(), join_path(special_path, "ids"), "a list of ids", ids);
    for (const json& id : ids) (text_seen ? out.suffix : out.prefix).push_back(f.id(id, join_path(special_path, "ids")));
  }
  if (!text_seen) throw f.unsupported(join_path(path, "single"), single, "the template must contain {\"Sequence\": {\"id\": \"A\"}}");
}

// RobertaProcessing and BertProcessing: cls, the text, sep.
void read_cls_sep(const JsonFields& f, const json& value, const std::string& path, PostProcessorIds& out) {
  for (const char* key : {"cls", "sep"}) {
    const json& pair = f.required(value, key, path);
    f.expect(pair.is_array() && pair.size() == 2, join_path(path, key), "[token, id]", pair);
    (std::string(key) == "cls" ? out.prefix : out.suffix).push_back(f.id(pair[1], join_path(path, key) + "[1]"));
  }
}

}  // namespace

void read_normalizer(const JsonFields& f, const json& root, Normalizer& out) {
  if (root.contains("normalizer")) read_normalizer(f, root["normalizer"], "normalizer", out);
}

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonFields& f, const json& root) {
  const json& value = f.required(root, "pre_tokenizer", "");
  if (value.is_null()) throw f.unsupported("pre_tokenizer", value, kOnlyByteLevel);
  auto out = std::make_unique<PreTokenizer>();
  bool byte_level_seen = false;
  read_pre_tokenizer(f, value, "pre_tokenizer", *out, &byte_level_seen);
  if (!byte_level_seen) throw f.unsupported("pre_tokenizer", value, std::string("it has no ByteLevel; ") + kOnlyByteLevel);
  return out;
}

void read_post_processor(const JsonFields& f, const json& value, const std::string& path, PostProcessorIds& out) {
  if (value.is_null()) return;
  const std::string type = f.type(value, path);
  if (type == "Sequence") {
    const json& list = f.required(value, "processors", path);
    f.expect(list.is_array(), join_path(path, "processors"), "a list", list);
    for (size_t i = 0; i < list.size(); ++i) {
      read_post_processor(f, list[i], join_path(path, "processors") + "[" + std::to_string(i) + "]", out);
    }
  } else if (type == "TemplateProcessing" || type == "RobertaProcessing" || type == "BertProcessing") {
    if (out.templated) throw f.unsupported(path, value, "one template post-processor at most");
    out.templated = true;
    type == "TemplateProcessing" ? read_template(f, value, path, out) : read_cls_sep(f, value, path, out);
  } else if (type != "ByteLevel") {  // ByteLevel only adjusts offsets
    throw f.unsupported(join_path(path, "type"), type,
                        "supported post-processors: ByteLevel, TemplateProcessing, RobertaProcessing, "
                        "BertProcessing and Sequence of them");
  }
}

void check_decoder(const JsonFields& f, const json& root) {
  const json& value = f.required(root, "decoder", "");
  const std::string type = value.is_null() ? "" : f.type(value, "decoder");
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const json& list = f.required(value, "decoders", "decoder");
    if (list.is_array() && list.size() == 1 && list[0].is_object() && list[0].value("type", "") == "ByteLevel") return;
  }
  throw f.unsupported("decoder", value, std::string("the decoder must be ByteLevel; ") + kOnlyByteLevel);
}

void check_no_truncation_or_padding(const JsonFields& f, const json& root) {
  for (const char* key : {"truncation", "padding"}) {
    if (root.contains(key) && !root[key].is_null()) {
      throw f.unsupported(key, root[key], std::string("set it to null: ffnshape cuts and pads sequences itself"));
    }
  }
}

}  // namespace ffnshape::hf
