// Internal: exact-duplicate detection by a 64-bit hash of each document's text. The hashes live in a
// flat open-addressing table (kept at most half full: 16 to 32 bytes per distinct document) and are
// appended to a log file, so an interrupted prepare can rebuild the table without re-reading text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace ffnshape::data {

// FNV-1a 64 of bytes (stable across builds, so the hashes in a resume log stay valid).
uint64_t fnv1a64(std::string_view bytes, uint64_t hash = 1469598103934665603ULL);
// FNV-1a 64 of a file's bytes as 16 hex digits.
std::string file_fnv1a64(const std::string& path);

class DedupSet {
 public:
  // log_path: where the hashes of the distinct documents are appended. resume_count > 0 loads the
  // first resume_count hashes of an existing log and drops the rest (written after the resume point).
  explicit DedupSet(std::string log_path, uint64_t resume_count = 0);
  ~DedupSet();
  DedupSet(const DedupSet&) = delete;
  DedupSet& operator=(const DedupSet&) = delete;

  // True when the text was not seen before (and remembers it).
  bool insert(std::string_view text);
  void sync();
  uint64_t size() const { return size_; }

 private:
  bool insert_hash(uint64_t hash);
  void grow();

  std::string log_path_;
  std::FILE* log_ = nullptr;
  std::vector<uint64_t> slots_;  // 0 = empty; a hash of 0 is stored as 1
  uint64_t size_ = 0;
};

}  // namespace ffnshape::data
