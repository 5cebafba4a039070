// ffnshape generate RUN (--prompt TEXT [--chat [--system TEXT]] | --prompt-tokens 5,17,42) [--max-tokens N]
//                   [--temperature T] [--top-k K] [--top-p P] [--seed S] [--stop-token ID] [--no-cache] [--json]
#include <nlohmann/json.hpp>

#include <iostream>
#include <sstream>

#include "commands.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/data/chat_template.h"
#include "ffnshape/nn/generation.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/data_error.h"
#include "ffnshape/train/tokenizer.h"

namespace ffnshape::cli {
namespace {

struct GenerateCliOptions {
  std::string target;
  std::string prompt;
  std::string prompt_tokens;
  bool chat = false;
  std::string system;
  nn::SamplingOptions sampling;
  bool no_cache = false;
  bool json = false;
  int64_t stop_token = -1;
};

std::vector<int64_t> parse_token_list(const std::string& text, int64_t vocab_size) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    try {
      size_t used = 0;
      const long long id = std::stoll(item, &used);
      if (used != item.size() || id < 0 || id >= vocab_size) throw std::out_of_range(item);
      ids.push_back(id);
    } catch (const std::exception&) {
      throw ConfigError("--prompt-tokens", "has '" + item + "', not a token id in [0, " + std::to_string(vocab_size) + ")",
                        "give comma-separated ids, e.g. --prompt-tokens 5,17,42");
    }
  }
  return ids;
}

// The prompt's ids: as the tokenizer frames a prompt (BOS where its convention says), or, with --chat,
// the model's chat template rendered around it and encoded as written (the template holds the
// special tokens, as transformers' apply_chat_template does).
std::vector<int64_t> encode_prompt(const GenerateCliOptions& o, const Tokenizer& tokenizer) {
  std::vector<uint32_t> ids;
  if (o.chat) {
    const auto chat_template = find_chat_template(tokenizer.model_path());
    if (!chat_template) {
      throw ConfigError("--chat", "needs a chat template, and none lies beside " + tokenizer.model_path(),
                        "import the model's Hugging Face folder or GGUF file (they carry one), or drop --chat");
    }
    ids = tokenizer.encode(render_chat_prompt(*chat_template, o.prompt, o.system));
  } else {
    ids = tokenizer.encode_with_special_tokens(o.prompt);
  }
  return {ids.begin(), ids.end()};
}

int run_generate(GenerateCliOptions& o) {
  if (o.prompt.empty() == o.prompt_tokens.empty()) {
    throw ConfigError("--prompt", "and --prompt-tokens: give exactly one of them",
                      "e.g. --prompt \"Once upon a time\" or --prompt-tokens 5,17,42");
  }
  if ((o.chat || !o.system.empty()) && o.prompt.empty()) {
    throw ConfigError("--chat", "and --system need --prompt (text)", "e.g. --prompt \"What is 2+2?\" --chat");
  }
  auto trained = load_trained_model(o.target);
  const auto& config = trained.config;
  std::optional<Tokenizer> tokenizer;
  if (!config.data.tokenizer.empty()) tokenizer = Tokenizer::load(config.data.tokenizer);
  std::vector<int64_t> prompt;
  if (!o.prompt_tokens.empty()) {
    prompt = parse_token_list(o.prompt_tokens, config.model.vocab_size);
  } else {
    if (!tokenizer) {
      throw ConfigError("--prompt", "needs a tokenizer, and the run's data.tokenizer is not set",
                        "use --prompt-tokens, or train with data.tokenizer set");
    }
    prompt = encode_prompt(o, *tokenizer);
    for (const auto id : prompt) {
      if (id >= config.model.vocab_size) {
        throw DataError("the tokenizer " + tokenizer->model_path() + " gave id " + std::to_string(id) +
                        ", but the model has " + std::to_string(config.model.vocab_size) +
                        " embedding rows\n  fix: set data.tokenizer to the model's own tokenizer, or use --prompt-tokens");
      }
    }
  }
  if (tokenizer && tokenizer->eos_id() >= 0) o.sampling.stop_token = tokenizer->eos_id();
  if (o.stop_token >= 0) o.sampling.stop_token = o.stop_token;
  o.sampling.use_cache = !o.no_cache;
  const auto tokens = nn::generate(trained.model, prompt, o.sampling);
  // Decoded together with the prompt, so that the first new word keeps its leading space.
  std::string text, full_text;
  if (tokenizer) {
    std::vector<uint32_t> all(prompt.begin(), prompt.end());
    const auto prompt_text = tokenizer->decode(all);
    all.insert(all.end(), tokens.begin(), tokens.end());
    full_text = tokenizer->decode(all);
    text = full_text.rfind(prompt_text, 0) == 0 ? full_text.substr(prompt_text.size())
                                                : tokenizer->decode(std::vector<uint32_t>(tokens.begin(), tokens.end()));
  }
  if (o.json) {
    nlohmann::json out = {{"checkpoint", trained.checkpoint}, {"prompt_tokens", prompt}, {"tokens", tokens}};
    if (tokenizer) out["text"] = text;
    std::cout << out.dump(2) << "\n";
  } else if (tokenizer) {
    std::cout << full_text << "\n";
  } else {
    for (size_t i = 0; i < tokens.size(); ++i) std::cout << (i ? "," : "") << tokens[i];
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

Subcommand add_generate_command(CLI::App& app) {
  auto o = std::make_shared<GenerateCliOptions>();
  auto* sub = app.add_subcommand("generate", "Sample text from a run's model (KV cache; greedy at temperature 0)");
  sub->add_option("target", o->target, "Run directory or checkpoint folder")->required();
  sub->add_option("--prompt", o->prompt, "Prompt text (needs the run's tokenizer)");
  sub->add_option("--prompt-tokens", o->prompt_tokens, "Prompt as comma-separated token ids");
  sub->add_flag("--chat", o->chat, "Wrap --prompt in the model's chat template as a user turn (ChatML templates)");
  sub->add_option("--system", o->system, "With --chat: the system message (default: the template's own, if any)");
  sub->add_option("--max-tokens", o->sampling.max_tokens, "New tokens at most (default 64)")->check(CLI::PositiveNumber);
  sub->add_option("--temperature", o->sampling.temperature, "0 = greedy (default)")->check(CLI::NonNegativeNumber);
  sub->add_option("--top-k", o->sampling.top_k, "Sample among the K most likely tokens")->check(CLI::NonNegativeNumber);
  sub->add_option("--top-p", o->sampling.top_p, "Nucleus sampling threshold in (0, 1]")->check(CLI::Range(1e-9, 1.0));
  sub->add_option("--seed", o->sampling.seed, "Sampling seed (default 0)");
  sub->add_option("--stop-token", o->stop_token, "Stop after this token id (default: the tokenizer's EOS, if any)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--no-cache", o->no_cache, "Recompute the whole sequence per token (a check of the KV cache)");
  sub->add_flag("--json", o->json, "Print JSON: prompt_tokens, tokens and text (with a tokenizer)");
  return {sub, [o] { return run_generate(*o); }};
}

}  // namespace ffnshape::cli
