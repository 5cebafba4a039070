// Internal: the lines of a byte stream, one at a time, through a fixed read buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "byte_stream.h"

namespace ffnshape::data {

class LineReader {
 public:
  explicit LineReader(std::unique_ptr<ByteStream> stream);

  // The next line without its '\n'; false at the end. The stream's DataError passes through, and the
  // line it interrupted is dropped (so every reading of a damaged file yields the same lines).
  bool next(std::string& line);
  // 1-based number of the line last returned.
  int64_t line_number() const { return line_number_; }

 private:
  std::unique_ptr<ByteStream> stream_;
  std::vector<char> buffer_;
  size_t pos_ = 0, end_ = 0;
  int64_t line_number_ = 0;
  bool at_end_ = false;
};

}  // namespace ffnshape::data
