#include "ffnshape/data/chat_template.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ffnshape/config/config_error.h"
#include "ffnshape/train/data_error.h"

namespace fs = std::filesystem;

namespace ffnshape {
namespace {

const std::string kStart = "<|im_start|>", kEnd = "<|im_end|>";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw DataError("cannot read '" + path.string() + "'\n  fix: check its permissions");
  return text.str();
}

// ChatML: each message as <|im_start|>ROLE\nCONTENT<|im_end|>\n, the turn opened with
// <|im_start|>assistant\n. Recognised by the role written right after the start token.
bool is_chatml(const std::string& t) {
  for (const char* form : {"'<|im_start|>' + message['role']", "'<|im_start|>' + message[\"role\"]",
                           "'<|im_start|>' + message.role", "<|im_start|>{{ message['role'] }}",
                           "<|im_start|>{{ message.role }}"}) {
    if (t.find(form) != std::string::npos) return true;
  }
  return false;
}

// The system message a ChatML template writes when the conversation has none: a literal
// '<|im_start|>system\nTEXT<|im_end|>' inside the template (the newline written as such or as \n),
// or nothing.
std::string default_system_message(const std::string& t) {
  for (const std::string newline : {"\n", "\\n"}) {
    const auto head = "'" + kStart + "system" + newline;
    for (auto start = t.find(head); start != std::string::npos; start = t.find(head, start + 1)) {
      const auto text_start = start + head.size();
      const auto end = t.find(kEnd, text_start);
      if (end == std::string::npos) break;
      auto text = t.substr(text_start, end - text_start);
      if (text.find('\'') != std::string::npos || text.find('{') != std::string::npos) continue;  // not a literal
      return text;
    }
  }
  return "";
}

}  // namespace

std::optional<std::string> find_chat_template(const std::string& tokenizer_path) {
  const auto dir = fs::path(tokenizer_path).parent_path();
  if (fs::is_regular_file(dir / "chat_template.jinja")) return read_file(dir / "chat_template.jinja");
  const auto config_path = dir / "tokenizer_config.json";
  if (!fs::is_regular_file(config_path)) return std::nullopt;
  const auto config = nlohmann::json::parse(read_file(config_path), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) {
    throw DataError("'" + config_path.string() + "' is not valid JSON\n  fix: restore the file from the model's folder");
  }
  const auto it = config.find("chat_template");
  if (it == config.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string render_chat_prompt(const std::string& chat_template, const std::string& user, const std::string& system) {
  if (!is_chatml(chat_template)) {
    throw ConfigError("--chat", "needs a ChatML chat template (<|im_start|>role ... <|im_end|>), and this model's "
                      "template is another one", "write the prompt with the model's special tokens yourself and pass it as --prompt");
  }
  const auto system_text = system.empty() ? default_system_message(chat_template) : system;
  std::string prompt;
  if (!system_text.empty()) prompt += kStart + "system\n" + system_text + kEnd + "\n";
  prompt += kStart + "user\n" + user + kEnd + "\n";
  prompt += kStart + "assistant\n";
  return prompt;
}

}  // namespace ffnshape
