#include "dedup_set.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ffnshape/train/data_error.h"

namespace ffnshape::data {
namespace {

[[noreturn]] void log_failed(const std::string& path) {
  throw DataError(path + ": cannot write (" + std::strerror(errno) + ")\n  fix: check free space and permissions");
}

}  // namespace

uint64_t fnv1a64(std::string_view bytes, uint64_t hash) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::string file_fnv1a64(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot read the file\n  fix: check the path and its permissions");
  uint64_t hash = 1469598103934665603ULL;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    hash = fnv1a64(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())), hash);
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

DedupSet::DedupSet(std::string log_path, uint64_t resume_count)
    : log_path_(std::move(log_path)), slots_(size_t{1} << 16, 0) {
  if (resume_count > 0) {
    std::error_code error;
    if (std::filesystem::file_size(log_path_, error) < resume_count * 8 || error) {
      throw DataError(log_path_ + ": shorter than the saved state says\n  fix: delete the output folder and prepare again");
    }
    std::filesystem::resize_file(log_path_, resume_count * 8);
    std::ifstream in(log_path_, std::ios::binary);
    uint64_t hash = 0;
    while (in.read(reinterpret_cast<char*>(&hash), sizeof hash)) insert_hash(hash);
  }
  log_ = std::fopen(log_path_.c_str(), resume_count > 0 ? "ab" : "wb");
  if (!log_) log_failed(log_path_);
}

DedupSet::~DedupSet() {
  if (log_) std::fclose(log_);
}

bool DedupSet::insert(std::string_view text) {
  const uint64_t hash = fnv1a64(text);
  if (!insert_hash(hash)) return false;
  if (std::fwrite(&hash, sizeof hash, 1, log_) != 1) log_failed(log_path_);
  return true;
}

bool DedupSet::insert_hash(uint64_t hash) {
  if (hash == 0) hash = 1;
  if (2 * (size_ + 1) > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = (hash * 0x9E3779B97F4A7C15ULL) >> 20 & mask;; i = (i + 1) & mask) {
    if (slots_[i] == hash) return false;
    if (slots_[i] == 0) {
      slots_[i] = hash;
      ++size_;
      return true;
    }
  }
}

void DedupSet::grow() {
  std::vector<uint64_t> old(slots_.size() * 2, 0);
  old.swap(slots_);
  size_ = 0;
  for (const uint64_t hash : old) {
    if (hash != 0) insert_hash(hash);
  }
}

void DedupSet::sync() {
  if (std::fflush(log_) != 0 || ::fsync(::fileno(log_)) != 0) log_failed(log_path_);
}

}  // namespace ffnshape::data
