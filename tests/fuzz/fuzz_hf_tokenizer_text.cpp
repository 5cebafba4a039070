// Encoding arbitrary text with a real byte-level BPE tokenizer (tests/fuzz/data/tokenizer.json, with
// added and special tokens): it never fails, and for valid UTF-8 decode(encode(text)) == text.
#include "fuzz_support.h"
#include "ffnshape/data/hf_tokenizer.h"
#include "../../src/data/hf_tokenizer_parts.h"

#include <cstdio>

namespace {

const ffnshape::HfTokenizer& tokenizer() {
  static const auto loaded = ffnshape::HfTokenizer::load(FFNSHAPE_FUZZ_DATA_DIR "/tokenizer.json");
  return loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ids = tokenizer().encode(text);
  const std::string decoded = tokenizer().decode(ids);
  std::string repaired;
  if (ffnshape::hf::valid_utf8(text, repaired) == text && decoded != text) {
    std::fprintf(stderr, "decode(encode(text)) differs from the text (%zu bytes -> %zu ids -> %zu bytes)\n",
                 text.size(), ids.size(), decoded.size());
    std::abort();
  }
  return 0;
}
