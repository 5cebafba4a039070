// Internal: the shards of one split (PREFIX_000000.bin, PREFIX_000001.bin, ...) written as a stream.
// Each shard is written as PREFIX_NNNNNN.bin.partial: a zeroed header, then the tokens. When it holds
// shard_tokens tokens, or the split ends, its header is filled in and it is renamed to its final
// name. A reader never sees a half-written shard; a killed writer continues from a synced point.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ffnshape::data {

class ShardSeries {
 public:
  ShardSeries(std::string out_dir, std::string prefix, int64_t shard_tokens, int64_t vocab_size);
  ~ShardSeries();
  ShardSeries(const ShardSeries&) = delete;
  ShardSeries& operator=(const ShardSeries&) = delete;

  // Continues from a synced point: `index` shards are complete and the partial one held `in_shard`
  // tokens; later bytes and later shards (written after that point) are discarded.
  void resume(int index, int64_t in_shard);
  void append(const std::vector<uint32_t>& ids);
  // Makes everything appended so far durable (for a resume point).
  void sync();
  // Completes the last shard if it holds any token.
  void finish();

  int index() const { return index_; }            // shards completed
  int64_t in_shard() const { return in_shard_; }  // tokens of the partial shard
  std::string path(int index) const;              // the final name of shard `index`

 private:
  void open_partial();
  void complete_shard();
  void flush_buffer();

  std::string out_dir_, prefix_;
  int64_t shard_tokens_;
  int bytes_per_token_;
  int index_ = 0;
  int64_t in_shard_ = 0;
  std::FILE* file_ = nullptr;
  std::vector<unsigned char> buffer_;
};

// Removes PREFIX_NNNNNN.bin and .bin.partial files of earlier prepares from out_dir.
void remove_shards(const std::string& out_dir, const std::string& prefix);

}  // namespace ffnshape::data
