// Hugging Face tokenizer.json: the model, normalizer, pre-tokenizer, post-processor, decoder and added
// tokens, and a tokenizer that loads must encode and decode.
#include "fuzz_support.h"
#include "ffnshape/data/hf_tokenizer.h"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string json(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean_errors([&] {
    const auto tokenizer = ffnshape::HfTokenizer::from_json(json, "tokenizer.json");
    const auto ids = tokenizer.encode_with_special_tokens("Hello world! <|endoftext|> héllo  wörld 12345\n\tz");
    (void)tokenizer.decode(ids);
    (void)tokenizer.decode(ids, true);
    for (int id = 0; id < std::min(tokenizer.vocab_size(), 64); ++id) {
      if (tokenizer.token_to_id(tokenizer.id_to_token(id)) < 0) continue;  // holes in the vocabulary
    }
  });
  return 0;
}
