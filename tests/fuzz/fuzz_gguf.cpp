// GGUF reader: header, metadata, tensor infos, dequantization of every readable type, and the
// conversion of an embedded vocabulary to tokenizer.json (what `ffnshape import` does with it).
#include "fuzz_support.h"
#include "ffnshape/data/hf_tokenizer.h"
#include "ffnshape/interop/gguf.h"
#include "../../src/interop/gguf_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input.gguf", data, size);
  fuzz::expect_clean_errors([&] {
    const ffnshape::interop::GgufFile gguf(path);
    for (const auto& key : gguf.keys()) (void)gguf.value(key).describe();
    for (const auto& name : gguf.tensor_names()) {
      const auto& info = gguf.tensor_info(name);
      if (!info.readable() || info.numel > (1 << 16)) continue;
      const auto values = gguf.tensor(name);
      (void)values.sum().item<float>();  // touches every element
    }
    if (const auto files = ffnshape::interop::hf_tokenizer_from_gguf(gguf)) {
      const auto tokenizer =
          ffnshape::HfTokenizer::from_json(files->tokenizer_json, path, files->tokenizer_config_json);
      (void)tokenizer.decode(tokenizer.encode("Hello world, héllo 123!"));
    }
  });
  return 0;
}
