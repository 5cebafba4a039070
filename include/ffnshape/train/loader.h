// Token shards (llm.c format) and the training / validation loader.
//
// Shard format: a 1024-byte header of 256 little-endian int32 -- [0] magic (20240520 for uint16
// tokens with [1] = version 1; 20240801 for uint32 tokens with [1] = version 7), [2] token count --
// then the tokens. A file whose size disagrees with its header is rejected.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ffnshape/train/data_error.h"

namespace ffnshape {

// Writes tokens as a shard: uint16 when every id < 65536 fits (vocab_size <= 65536), else uint32.
void write_shard(const std::string& path, const std::vector<uint32_t>& tokens, int64_t vocab_size);
// The format's choices, for writers that stream a shard (data prepare): uint16 tokens when the
// vocabulary fits, and the 1024-byte header for `token_count` tokens of that width.
bool shard_uses_uint16(int64_t vocab_size);
std::vector<unsigned char> shard_header(int64_t token_count, bool uint16_tokens);

// A memory-mapped shard. Throws DataError naming the file for a missing file, a bad magic/version,
// or a size that disagrees with the header.
class Shard {
 public:
  explicit Shard(const std::string& path);
  ~Shard();
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return count_; }
  uint32_t token(int64_t i) const;
  // Copies tokens [start, start + n) into out as int64.
  void read(int64_t start, int64_t n, int64_t* out) const;
  // Largest token id (scans the shard once; cached).
  uint32_t max_token() const;

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  int64_t count_ = 0;
  int bytes_per_token_ = 2;
  mutable int64_t max_token_ = -1;
};

// Expands a glob ("data/bigtxt/train_*.bin") to sorted paths; DataError if nothing matches.
std::vector<std::string> expand_glob(const std::string& pattern);

struct LoaderOptions {
  std::string pattern;        // shard glob
  int64_t seq_len = 256;
  int64_t batch = 8;          // sequences per batch of this rank
  uint64_t seed = 0;
  int64_t rank = 0, world = 1;
  bool sequential = false;    // walk windows in order instead of sampling
  int64_t vocab_size = 0;     // > 0: reject shards holding ids >= vocab_size (DataError)
  bool pin_memory = false;    // batches in page-locked memory, for asynchronous copies to a GPU
};

// Everything needed to continue exactly where a loader stopped (saved in checkpoints).
struct LoaderState {
  uint64_t batches_drawn = 0;
};

// Draws batches of contiguous windows of seq_len + 1 tokens: x = window[:-1], y = window[1:].
// Each draw is one global batch of world * batch windows, fixed by (seed, batches_drawn) alone; rank
// r gets rows [r * batch, (r + 1) * batch). So R ranks of batch b read exactly what one loader of
// batch R * b reads, no two ranks read the same row, and a saved state resumes at any world size.
// Random mode samples window starts uniformly over all shards; sequential mode walks the
// non-overlapping windows of all shards in order, wrapping at the end. Shards shorter than one window
// are skipped; DataError if none is left.
class TokenLoader {
 public:
  explicit TokenLoader(LoaderOptions options);
  ~TokenLoader();

  // (x, y), each (batch, seq_len) int64 on the CPU.
  std::pair<torch::Tensor, torch::Tensor> next();
  // The same draw as next() before the split: (batch, seq_len + 1) windows, one contiguous tensor (so
  // a GPU gets it in one asynchronous copy); x = windows[:, :-1], y = windows[:, 1:].
  torch::Tensor next_windows();
  LoaderState state() const;
  void set_state(const LoaderState& state);

  int64_t total_tokens() const;  // tokens in the shards used
  const LoaderOptions& options() const { return options_; }

 private:
  LoaderOptions options_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A fixed, deterministic set of `batches` validation batches (the same for every call with the same
// arguments): evenly spaced non-overlapping windows over all shards.
std::vector<std::pair<torch::Tensor, torch::Tensor>> validation_batches(const std::string& pattern, int64_t seq_len,
                                                                        int64_t batch, int64_t batches,
                                                                        int64_t vocab_size = 0);

}  // namespace ffnshape
