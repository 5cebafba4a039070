// Chat prompts: ChatML templates rendered as transformers' apply_chat_template renders them (the
// expected strings below are its output for SmolLM2-135M-Instruct's template), others refused.
#include <gtest/gtest.h>

#include <fstream>

#include "ffnshape/config/config_error.h"
#include "ffnshape/data/chat_template.h"
#include "temp_dir.h"

using namespace ffnshape;

namespace {

// SmolLM2-135M-Instruct's template as its GGUF file stores it (newlines inside the string literals).
const std::string kSmolLM2 =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

}  // namespace

TEST(ChatTemplate, RendersSmolLM2WithItsDefaultSystemMessage) {
  EXPECT_EQ(render_chat_prompt(kSmolLM2, "What is 2+2?"),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render_chat_prompt(kSmolLM2, "Hi", "Be brief."),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, ChatMLWithoutADefaultSystemMessage) {
  const std::string plain =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
      "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  EXPECT_EQ(render_chat_prompt(plain, "Hi"), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, OtherTemplatesAreRefusedByName) {
  const std::string llama3 =
      "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + "
      "message['content'] + '<|eot_id|>' }}{% endfor %}";
  try {
    render_chat_prompt(llama3, "Hi");
    FAIL() << "a Llama-3 template was rendered as ChatML";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ChatML"), std::string::npos) << e.what();
  }
}

TEST(ChatTemplate, FoundBesideTheTokenizer) {
  ffnshape::testing::TempDir dir;
  const auto tokenizer = dir.file("tokenizer.json");
  std::ofstream(tokenizer) << "{}";
  EXPECT_FALSE(find_chat_template(tokenizer).has_value());
  std::ofstream(dir.file("tokenizer_config.json")) << R"({"chat_template": "from config"})";
  EXPECT_EQ(find_chat_template(tokenizer).value_or(""), "from config");
  std::ofstream(dir.file("chat_template.jinja")) << "from jinja";
  EXPECT_EQ(find_chat_template(tokenizer).value_or(""), "from jinja");  // the separate file wins, as in transformers
}
