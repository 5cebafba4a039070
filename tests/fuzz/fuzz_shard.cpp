// llm.c token shards: the header, the token data, and the loaders that draw training and validation
// batches from them (with a vocabulary bound, as `ffnshape train` uses them).
#include "fuzz_support.h"
#include "ffnshape/train/loader.h"

#include <algorithm>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("train_000000.bin", data, size);
  fuzz::expect_clean_errors([&] {
    const ffnshape::Shard shard(path);
    const int64_t n = std::min<int64_t>(shard.size(), 64);
    std::vector<int64_t> tokens(static_cast<size_t>(n));
    shard.read(0, n, tokens.data());
    (void)shard.max_token();
  });
  fuzz::expect_clean_errors([&] {
    ffnshape::LoaderOptions options;
    options.pattern = path;
    options.seq_len = 4;
    options.batch = 2;
    options.vocab_size = 50257;
    ffnshape::TokenLoader loader(options);
    (void)loader.next();
    (void)loader.next_windows();
  });
  fuzz::expect_clean_errors([&] { (void)ffnshape::validation_batches(path, 4, 2, 2, 50257); });
  return 0;
}
