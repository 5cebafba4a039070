#include "shard_series.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include "ffnshape/train/data_error.h"
#include "ffnshape/train/loader.h"

namespace fs = std::filesystem;

namespace ffnshape::data {
namespace {

constexpr int kHeaderInts = 256;
constexpr size_t kBufferBytes = size_t{1} << 20;

[[noreturn]] void write_failed(const std::string& path) {
  throw DataError(path + ": cannot write (" + std::strerror(errno) + ")\n  fix: check free space and permissions");
}

}  // namespace

ShardSeries::ShardSeries(std::string out_dir, std::string prefix, int64_t shard_tokens, int64_t vocab_size)
    : out_dir_(std::move(out_dir)), prefix_(std::move(prefix)), shard_tokens_(shard_tokens),
      bytes_per_token_(shard_uses_uint16(vocab_size) ? 2 : 4) {
  buffer_.reserve(kBufferBytes + 8);
}

ShardSeries::~ShardSeries() {
  if (file_) std::fclose(file_);
}

std::string ShardSeries::path(int index) const {
  char name[32];
  std::snprintf(name, sizeof name, "_%06d.bin", index);
  return (fs::path(out_dir_) / (prefix_ + name)).string();
}

void ShardSeries::resume(int index, int64_t in_shard) {
  index_ = index;
  in_shard_ = in_shard;
  // Shards completed after the resume point are redone.
  for (int later = index + (in_shard > 0 ? 1 : 0);; ++later) {
    const bool any = fs::remove(path(later)) | fs::remove(path(later) + ".partial");
    if (!any) break;
  }
  if (in_shard == 0) {
    fs::remove(path(index));
    fs::remove(path(index) + ".partial");
    return;
  }
  const auto partial = path(index) + ".partial";
  if (!fs::exists(partial) && fs::exists(path(index))) fs::rename(path(index), partial);  // completed after the point
  if (!fs::exists(partial)) throw DataError(partial + ": missing, cannot continue\n  fix: delete the output folder and prepare again");
  fs::resize_file(partial, static_cast<uintmax_t>(kHeaderInts * 4 + in_shard * bytes_per_token_));
  file_ = std::fopen(partial.c_str(), "r+b");
  if (!file_ || std::fseek(file_, 0, SEEK_END) != 0) write_failed(partial);
}

void ShardSeries::open_partial() {
  const auto partial = path(index_) + ".partial";
  file_ = std::fopen(partial.c_str(), "w+b");
  if (!file_) write_failed(partial);
  const int32_t zeros[kHeaderInts] = {};  // the header is written when the shard is complete
  if (std::fwrite(zeros, sizeof zeros, 1, file_) != 1) write_failed(partial);
}

void ShardSeries::append(const std::vector<uint32_t>& ids) {
  for (const uint32_t id : ids) {
    if (!file_) open_partial();
    for (int b = 0; b < bytes_per_token_; ++b) buffer_.push_back(static_cast<unsigned char>(id >> (8 * b)));
    if (++in_shard_ == shard_tokens_) complete_shard();
    else if (buffer_.size() >= kBufferBytes) flush_buffer();
  }
}

void ShardSeries::flush_buffer() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    write_failed(path(index_) + ".partial");
  }
  buffer_.clear();
}

void ShardSeries::sync() {
  if (!file_) return;
  flush_buffer();
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) write_failed(path(index_) + ".partial");
}

void ShardSeries::complete_shard() {
  flush_buffer();
  const auto header = shard_header(in_shard_, bytes_per_token_ == 2);
  const auto partial = path(index_) + ".partial";
  if (std::fseek(file_, 0, SEEK_SET) != 0 || std::fwrite(header.data(), header.size(), 1, file_) != 1) write_failed(partial);
  sync();
  std::fclose(file_);
  file_ = nullptr;
  fs::rename(partial, path(index_));
  ++index_;
  in_shard_ = 0;
}

void ShardSeries::finish() {
  if (file_ && in_shard_ > 0) complete_shard();
}

void remove_shards(const std::string& out_dir, const std::string& prefix) {
  const std::regex ours(prefix + "_[0-9]{6}\\.bin(\\.partial)?");
  for (const auto& entry : fs::directory_iterator(out_dir)) {
    if (std::regex_match(entry.path().filename().string(), ours)) fs::remove(entry.path());
  }
}

}  // namespace ffnshape::data
