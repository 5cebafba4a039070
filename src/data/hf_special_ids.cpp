// Which ids are bos, eos, pad and unk. tokenizer.json does not say (only its post-processor shows a
// bos), so: a key of tokenizer_config.json beside it decides when present; otherwise bos is the
// first id the post-processor's template puts before the text, eos the first special added token
// among kEosNames, pad the first among kPadNames, unk the BPE model's unk_token; else -1.
#include "hf_json_fields.h"
#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {

constexpr const char* kEosNames[] = {"<|endoftext|>", "<|end_of_text|>", "</s>", "<|im_end|>", "<eos>", "<|eot_id|>"};
constexpr const char* kPadNames[] = {"<pad>", "<|pad|>", "[PAD]", "<|finetune_right_pad_id|>"};

int first_special(const HfTokenizer::Impl& impl, const char* const* names, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const auto found = impl.ids.find(names[i]);
    if (found != impl.ids.end() && impl.special[found->second]) return static_cast<int>(found->second);
  }
  return -1;
}

// A tokenizer_config.json token: "text", {"content": "text", ...} or null (none).
void read_config_token(const JsonFields& f, const json& config, const char* key, const HfTokenizer::Impl& impl,
                       int* id) {
  const auto found = config.find(key);
  if (found == config.end()) return;
  if (found->is_null()) {
    *id = -1;
    return;
  }
  f.expect(found->is_string() || found->is_object(), key, "a token (\"text\" or {\"content\": \"text\"}) or null", *found);
  const std::string content = found->is_object() ? f.string(*found, "content", key) : found->get<std::string>();
  const auto token = impl.ids.find(content);
  if (token == impl.ids.end()) {
    throw f.invalid(key, "= \"" + content + "\" is not a token of the tokenizer.json beside it",
                    "name a token of its vocabulary or added_tokens, or remove the key");
  }
  *id = static_cast<int>(token->second);
}

}  // namespace

void assign_special_ids(HfTokenizer::Impl& impl, const std::string& config_text, const std::string& config_origin) {
  if (!impl.template_prefix.empty()) impl.bos = static_cast<int>(impl.template_prefix.front());
  impl.eos = first_special(impl, kEosNames, std::size(kEosNames));
  impl.pad = first_special(impl, kPadNames, std::size(kPadNames));
  for (const auto* ids : {&impl.template_prefix, &impl.template_suffix}) {
    for (uint32_t id : *ids) {
      if (id >= impl.tokens.size()) {
        throw DataError(impl.path + ": post_processor names id " + std::to_string(id) +
                        ", outside the vocabulary\n  fix: correct the template's special_tokens");
      }
    }
  }
  if (config_text.empty()) return;
  json config;
  try {
    config = json::parse(config_text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number too large
    throw DataError(config_origin + ": not valid JSON: " + e.what() + "\n  fix: correct or remove the file");
  }
  const JsonFields f(config_origin);
  f.expect(config.is_object(), "(top level)", "an object", config);
  read_config_token(f, config, "bos_token", impl, &impl.bos);
  read_config_token(f, config, "eos_token", impl, &impl.eos);
  read_config_token(f, config, "pad_token", impl, &impl.pad);
  read_config_token(f, config, "unk_token", impl, &impl.unk);
  impl.add_bos = f.boolean(config, "add_bos_token", "", false);
  impl.add_eos = f.boolean(config, "add_eos_token", "", false);
}

}  // namespace ffnshape::hf
