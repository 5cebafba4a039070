// Chat prompts for instruction-tuned models: the template that a Hugging Face tokenizer folder (or a
// GGUF file, through import) carries, applied to one user message with the assistant's turn opened,
// as transformers' apply_chat_template(..., add_generation_prompt=True) renders it.
//
// Templates are Jinja programs; ffnshape renders the ChatML family (<|im_start|>ROLE\nTEXT<|im_end|>\n,
// SmolLM2, Qwen2 and others), including a default system message written in the template, and
// refuses any other template by name rather than guess.
#pragma once

#include <optional>
#include <string>

namespace ffnshape {

// The chat template that belongs to a tokenizer file: chat_template.jinja beside it, else the
// "chat_template" string of tokenizer_config.json beside it. Nothing when neither exists.
std::optional<std::string> find_chat_template(const std::string& tokenizer_path);

// The prompt text for one user message (and a system message; empty: the template's default, if
// any). ConfigError when the template is not one ffnshape can render.
std::string render_chat_prompt(const std::string& chat_template, const std::string& user,
                               const std::string& system = "");

}  // namespace ffnshape
