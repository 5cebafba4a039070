// tokenizer.json -> the encoder's parts: the BPE model (vocab, merges in either form), the added
// tokens, the pipeline sections, and the id tables for lookups and decoding.
#include <atomic>

#include "hf_pipeline_json.h"

namespace ffnshape::hf {
namespace {

std::vector<std::pair<std::string, std::string>> read_merges(const JsonFields& f, const json& merges) {
  f.expect(merges.is_array(), "model.merges", "a list", merges);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& merge = merges[i];
    const std::string path = "model.merges[" + std::to_string(i) + "]";
    if (merge.is_string()) {  // "a b": exactly one space, as tokenizers requires
      const auto& text = merge.get_ref<const std::string&>();
      const size_t space = text.find(' ');
      f.expect(space != std::string::npos && text.find(' ', space + 1) == std::string::npos, path,
               "\"left right\" (one space)", merge);
      out.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else {
      f.expect(merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string(), path,
               "\"left right\" or [\"left\", \"right\"]", merge);
      out.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    }
  }
  return out;
}

void check_model_options(const JsonFields& f, const json& model) {
  const auto dropout = model.find("dropout");
  if (dropout != model.end() && !dropout->is_null() && !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    throw f.unsupported("model.dropout", *dropout, "set it to null: BPE dropout makes encoding random");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const auto found = model.find(key);
    if (found != model.end() && !found->is_null() && !(found->is_string() && found->get<std::string>().empty())) {
      throw f.unsupported(std::string("model.") + key, *found, "byte-level BPE files set it to null");
    }
  }
}

std::unique_ptr<BpeModel> read_model(const JsonFields& f, const json& root, int* unk_id) {
  const json& model = f.required(root, "model", "");
  const std::string type = f.type(model, "model", "BPE");
  if (type != "BPE") throw f.unsupported("model.type", type, "only BPE models are supported (byte-level BPE)");
  check_model_options(f, model);
  const json& vocab_json = f.required(model, "vocab", "model");
  f.expect(vocab_json.is_object(), "model.vocab", "an object {token: id}", vocab_json);
  std::vector<std::pair<std::string, uint32_t>> vocab;
  vocab.reserve(vocab_json.size());
  for (const auto& [token, id] : vocab_json.items()) vocab.emplace_back(token, f.id(id, "model.vocab." + token));
  BpeModel::Options options;
  options.byte_fallback = f.boolean(model, "byte_fallback", "model", false);
  options.fuse_unk = f.boolean(model, "fuse_unk", "model", false);
  options.ignore_merges = f.boolean(model, "ignore_merges", "model", false);
  const auto unk = model.find("unk_token");
  if (unk != model.end() && !unk->is_null()) {
    f.expect(unk->is_string() && vocab_json.contains(unk->get<std::string>()), "model.unk_token",
             "a token of model.vocab", *unk);
    options.unk_id = static_cast<int>(vocab_json[unk->get<std::string>()].get<uint32_t>());
  }
  *unk_id = options.unk_id;
  return std::make_unique<BpeModel>(vocab, read_merges(f, f.required(model, "merges", "model")), options,
                                    f.origin() + ": model");
}

std::vector<AddedToken> read_added_tokens(const JsonFields& f, const json& root) {
  std::vector<AddedToken> out;
  const auto list = root.find("added_tokens");
  if (list == root.end() || list->is_null()) return out;
  f.expect(list->is_array(), "added_tokens", "a list", *list);
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    const json& item = (*list)[i];
    AddedToken token;
    token.id = f.id(f.required(item, "id", path), join_path(path, "id"));
    token.content = f.string(item, "content", path);
    token.single_word = f.boolean(item, "single_word", path, false);
    token.lstrip = f.boolean(item, "lstrip", path, false);
    token.rstrip = f.boolean(item, "rstrip", path, false);
    token.special = f.boolean(item, "special", path, false);
    token.normalized = f.boolean(item, "normalized", path, !token.special);
    out.push_back(std::move(token));
  }
  return out;
}

// Non-normalized tokens match the raw text; normalized ones match normalized pieces, as their
// normalized content.
void index_added_tokens(HfTokenizer::Impl& impl, const std::vector<AddedToken>& tokens) {
  for (const auto& token : tokens) {
    if (!token.normalized) {
      impl.raw_added.add(token, token.content);
    } else {
      std::string scratch;
      impl.normalized_added.add(token, std::string(impl.normalizer.apply(token.content, scratch)));
    }
  }
}

constexpr size_t kMaxIdGap = 1 << 16;

// Lookup tables: id -> token, token -> id (added tokens win), id -> decoded bytes, special flags.
void build_tables(HfTokenizer::Impl& impl, const json& vocab, const std::vector<AddedToken>& added) {
  size_t size = 0;
  for (const auto& [token, id] : vocab.items()) size = std::max<size_t>(size, id.get<uint32_t>() + 1);
  for (const auto& token : added) size = std::max<size_t>(size, token.id + 1);
  // The tables have one row per id up to the largest: ids run from 0 with small gaps in real files,
  // and an id far beyond the entries (a corrupt file) would allocate for nothing.
  const size_t entries = vocab.size() + added.size();
  if (size > entries + kMaxIdGap) {
    throw DataError(impl.path + ": the largest token id is " + std::to_string(size - 1) + ", far beyond the " +
                    std::to_string(entries) + " tokens of model.vocab and added_tokens (more than " +
                    std::to_string(kMaxIdGap) + " ids unused)\n  fix: use a tokenizer.json saved by the tokenizers package");
  }
  impl.tokens.assign(size, "");
  impl.special.assign(size, 0);
  for (const auto& [token, id] : vocab.items()) {
    impl.tokens[id.get<uint32_t>()] = token;
    impl.ids[token] = id.get<uint32_t>();
  }
  for (const auto& token : added) {
    impl.tokens[token.id] = token.content;
    impl.ids[token.content] = token.id;
    impl.special[token.id] = token.special;
  }
  impl.decoded.resize(size);
  for (size_t id = 0; id < size; ++id) {  // ByteLevel decoder: a token with a foreign character stays as written
    if (!byte_chars_to_bytes(impl.tokens[id], impl.decoded[id])) impl.decoded[id] = impl.tokens[id];
  }
}

}  // namespace

std::shared_ptr<HfTokenizer::Impl> parse_tokenizer_json(const std::string& text, const std::string& origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number too large
    throw DataError(origin + ": not valid JSON: " + e.what() + "\n  fix: use a tokenizer.json saved by the tokenizers package");
  }
  const JsonFields f(origin);
  f.expect(root.is_object(), "(top level)", "an object", root);
  auto impl = std::make_shared<HfTokenizer::Impl>();
  static std::atomic<uint64_t> instances{0};
  impl->instance = ++instances;
  impl->path = origin;
  check_no_truncation_or_padding(f, root);
  impl->model = read_model(f, root, &impl->unk);
  read_normalizer(f, root, impl->normalizer);
  impl->pre_tokenizer = read_pre_tokenizer(f, root);
  check_decoder(f, root);
  PostProcessorIds post;
  if (root.contains("post_processor")) read_post_processor(f, root["post_processor"], "post_processor", post);
  impl->template_prefix = post.prefix;
  impl->template_suffix = post.suffix;
  impl->templated = post.templated;
  const auto added = read_added_tokens(f, root);
  index_added_tokens(*impl, added);
  build_tables(*impl, root["model"]["vocab"], added);
  return impl;
}

}  // namespace ffnshape::hf
