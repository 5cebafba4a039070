#include "ffnshape/interop/gguf_import.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>

#include "ffnshape/interop/gguf.h"
#include "ffnshape/interop/imported_run.h"
#include "ffnshape/train/data_error.h"
#include "../common/text_file.h"
#include "ffnshape/train/tokenizer.h"
#include "gguf_tokenizer.h"
#include "hf_names.h"
#include "sentencepiece_model.h"

namespace fs = std::filesystem;

namespace ffnshape::interop {
namespace {

// The llama.cpp name of a Hugging Face llama tensor name.
std::string gguf_name(const std::string& hf) {
  static const std::pair<const char*, const char*> renames[] = {
      {"self_attn.q_proj", "attn_q"},         {"self_attn.k_proj", "attn_k"},    {"self_attn.v_proj", "attn_v"},
      {"self_attn.o_proj", "attn_output"},    {"input_layernorm", "attn_norm"},  {"post_attention_layernorm", "ffn_norm"},
      {"mlp.gate_proj", "ffn_gate"},          {"mlp.up_proj", "ffn_up"},         {"mlp.down_proj", "ffn_down"}};
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  std::string name = hf;
  if (name.rfind("model.layers.", 0) == 0) name = "blk." + name.substr(13);
  for (const auto& [from, to] : renames) {
    if (const auto at = name.find(from); at != std::string::npos) name.replace(at, std::string(from).size(), to);
  }
  return name;
}

// llama.cpp stores q and k rows as (head, pair, half) where ffnshape has (head, half, pair): undo it.
torch::Tensor unpermute_rope_rows(const torch::Tensor& w, int64_t heads) {
  const auto rows = w.size(0);
  return w.reshape({heads, rows / heads / 2, 2, w.size(1)}).transpose(1, 2).reshape(w.sizes());
}

ModelConfig model_from_metadata(const GgufFile& g) {
  const auto arch = g.string("general.architecture");
  if (arch != "llama") {
    throw DataError("'" + g.path() + "' holds a " + arch + " model; ffnshape imports GGUF files of the llama architecture\n"
                    "  fix: convert the model to a Hugging Face folder and import that, if its family is supported");
  }
  if (g.contains("rope_freqs.weight")) {
    throw DataError("'" + g.path() + "' stores its RoPE frequencies as a tensor (rope_freqs, Llama-3 scaling)\n"
                    "  fix: import the Hugging Face folder of the model instead");
  }
  auto m = ModelConfig::defaults_for(Family::llama);
  m.d_model = g.integer("llama.embedding_length");
  m.n_layers = g.integer("llama.block_count");
  m.n_heads = g.integer("llama.attention.head_count");
  m.n_kv_heads = g.has("llama.attention.head_count_kv") ? g.integer("llama.attention.head_count_kv") : m.n_heads;
  if (g.has("llama.attention.key_length")) m.head_dim = g.integer("llama.attention.key_length");
  m.ffn.hidden = g.integer("llama.feed_forward_length");
  m.norm_eps = g.number("llama.attention.layer_norm_rms_epsilon");
  m.rope_theta = g.has("llama.rope.freq_base") ? g.number("llama.rope.freq_base") : 10000.0;
  m.max_seq_len = g.integer("llama.context_length");
  m.vocab_size = g.has("llama.vocab_size") ? g.integer("llama.vocab_size")
                                           : static_cast<int64_t>(g.strings("tokenizer.ggml.tokens").size());
  m.tie_embeddings = !g.contains("output.weight");
  return m;
}

// The embedded vocabulary as a SentencePiece model: llama.cpp's "llama" tokenizer is SentencePiece's
// (pieces with scores and types, merged by score), so it is rebuilt exactly. Other tokenizers (gpt2,
// i.e. byte-level BPE with merges) have no SentencePiece form. Returns the model file's bytes, or
// nothing; `description` says which, in words, for the report.
std::optional<std::string> sentencepiece_from_gguf(const GgufFile& g, std::string& description) {
  const auto kind = g.has("tokenizer.ggml.model") ? g.string("tokenizer.ggml.model") : std::string("none");
  if (kind != "llama") {
    description = "embedded " + kind + " vocabulary: not kept (only llama-type (SentencePiece) and gpt2-type "
          "(byte-level BPE) vocabularies are); give prompts as token ids";
    return std::nullopt;
  }
  SentencePieceVocab v;
  v.pieces = g.strings("tokenizer.ggml.tokens");
  v.scores = g.has("tokenizer.ggml.scores") ? g.floats("tokenizer.ggml.scores") : std::vector<float>(v.pieces.size(), 0.0f);
  try {
    v.types = g.has("tokenizer.ggml.token_type") ? piece_types(g.integers("tokenizer.ggml.token_type"))
                                                  : std::vector<PieceType>(v.pieces.size(), PieceType::normal);
    auto id = [&](const char* key, int fallback) { return g.has(key) ? static_cast<int>(g.integer(key)) : fallback; };
    v.unk_id = id("tokenizer.ggml.unknown_token_id", 0);
    v.bos_id = id("tokenizer.ggml.bos_token_id", -1);
    v.eos_id = id("tokenizer.ggml.eos_token_id", -1);
    v.pad_id = id("tokenizer.ggml.padding_token_id", -1);
    if (v.pad_id == v.unk_id || v.pad_id == v.bos_id || v.pad_id == v.eos_id) v.pad_id = -1;  // a reuse, not a piece of its own
    v.add_dummy_prefix = !g.has("tokenizer.ggml.add_space_prefix") || g.boolean("tokenizer.ggml.add_space_prefix");
    auto bytes = sentencepiece_model_bytes(v);
    description = "embedded llama vocabulary (" + std::to_string(v.pieces.size()) +
                  " pieces) -> tokenizer.model (SentencePiece); data.tokenizer points at it";
    return bytes;
  } catch (const std::invalid_argument& e) {
    throw DataError("the embedded llama vocabulary of '" + g.path() + "' is not a valid SentencePiece vocabulary: " + e.what() +
                    "\n  fix: give an unmodified llama.cpp conversion");
  }
}

// A gpt2-type (byte-level BPE) vocabulary as tokenizer.json + tokenizer_config.json. A pre-tokenizer
// ffnshape does not know leaves the model importable without a tokenizer, and the report says why.
std::optional<HfTokenizerFiles> byte_level_from_gguf(const GgufFile& g, std::string& description) {
  if (!g.has("tokenizer.ggml.model") || g.string("tokenizer.ggml.model") != "gpt2") return std::nullopt;
  try {
    auto files = hf_tokenizer_from_gguf(g);
    description = "embedded gpt2 vocabulary (" + std::to_string(files->tokens) + " tokens, " +
                  std::to_string(files->merges) + " merges, pre-tokenizer " + files->pre_tokenizer +
                  ") -> tokenizer.json (Hugging Face byte-level BPE); data.tokenizer points at it";
    return files;
  } catch (const DataError& e) {
    description = std::string("embedded gpt2 vocabulary: not kept: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace

HfImportReport import_gguf(const std::string& path, const std::string& run_dir, const HfImportOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_new_run_dir(run_dir);
  const GgufFile g(path);
  auto m = model_from_metadata(g);
  if (options.max_seq_len > 0) m.max_seq_len = options.max_seq_len;
  validate(m);
  nn::TransformerLM model(m);
  auto params = model->named_parameters();
  std::vector<std::string> missing, wrong;
  std::set<std::string> used;
  const auto names = hf_tensor_names(m);
  for (const auto& n : names) {
    const auto name = gguf_name(n.hf);
    used.insert(name);
    if (!g.contains(name)) {
      missing.push_back(name);
    } else if (g.tensor_info(name).shape != params[n.ours].sizes().vec()) {
      wrong.push_back(name);
    }
  }
  std::vector<std::string> unexpected;
  for (const auto& name : g.tensor_names()) {
    if (!used.count(name)) unexpected.push_back(name);
  }
  if (!missing.empty() || !wrong.empty() || !unexpected.empty()) {
    throw DataError("the tensors of '" + path + "' do not fit the model its metadata describes:" +
                    (missing.empty() ? "" : "\n  missing: " + first_names(missing)) +
                    (wrong.empty() ? "" : "\n  wrong shapes: " + first_names(wrong)) +
                    (unexpected.empty() ? "" : "\n  map to nothing: " + first_names(unexpected)) +
                    "\n  fix: give an unmodified llama.cpp conversion of a llama-architecture model");
  }
  {
    torch::NoGradGuard no_grad;
    for (const auto& n : names) {
      const auto name = gguf_name(n.hf);
      auto w = g.tensor(name, torch::kFloat);
      if (name.find("attn_q.weight") != std::string::npos) w = unpermute_rope_rows(w, m.n_heads);
      if (name.find("attn_k.weight") != std::string::npos) w = unpermute_rope_rows(w, m.kv_heads());
      if (options.dtype == Precision::bf16) w = w.to(torch::kBFloat16);
      params[n.ours].copy_(w);
    }
  }
  HfImportReport report;
  report.architecture = "llama (GGUF)";
  report.config.model = m;
  report.config.train.seq_len = std::min<int64_t>(report.config.train.seq_len, m.max_seq_len);
  report.config.train.precision = options.dtype;
  report.tensors = static_cast<int64_t>(names.size());
  report.parameters = model->num_parameters();
  const auto sentencepiece = sentencepiece_from_gguf(g, report.tokenizer);
  const auto byte_level = sentencepiece ? std::nullopt : byte_level_from_gguf(g, report.tokenizer);
  if (sentencepiece) report.config.data.tokenizer = (fs::absolute(run_dir) / "tokenizer.model").string();
  if (byte_level) report.config.data.tokenizer = (fs::absolute(run_dir) / "tokenizer.json").string();
  // Built under RUN_DIR.partial: a vocabulary libsentencepiece refuses leaves no half run behind.
  StagedFolder staged(run_dir);
  write_imported_run(report.config, model, staged.path().string(),
                     {{"format", "gguf"}, {"source", fs::absolute(path).string()}, {"dtype", to_string(options.dtype)},
                      {"tokenizer", report.tokenizer}});
  if (sentencepiece) {
    const auto written = (staged.path() / "tokenizer.model").string();
    write_text_file(written, *sentencepiece);
    Tokenizer::load(written);  // libsentencepiece's own check of what was written
  }
  if (byte_level) {
    write_text_file((staged.path() / "tokenizer_config.json").string(), byte_level->tokenizer_config_json + "\n");
    const auto written = (staged.path() / "tokenizer.json").string();
    write_text_file(written, byte_level->tokenizer_json + "\n");
    Tokenizer::load(written);  // the run's tokenizer must load before the run appears
  }
  staged.commit();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ffnshape::interop
