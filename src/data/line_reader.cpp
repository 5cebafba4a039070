#include "line_reader.h"

#include <cstring>

namespace ffnshape::data {

LineReader::LineReader(std::unique_ptr<ByteStream> stream) : stream_(std::move(stream)), buffer_(kReadBlockBytes) {}

bool LineReader::next(std::string& line) {
  line.clear();
  bool any = false;
  while (true) {
    if (pos_ == end_) {
      if (at_end_) break;
      end_ = stream_->read(buffer_.data(), buffer_.size());
      pos_ = 0;
      if (end_ == 0) {
        at_end_ = true;
        break;
      }
    }
    const char* start = buffer_.data() + pos_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - pos_));
    any = true;
    if (newline) {
      line.append(start, newline);
      pos_ += static_cast<size_t>(newline - start) + 1;
      ++line_number_;
      return true;
    }
    line.append(start, end_ - pos_);
    pos_ = end_;
  }
  if (!any) return false;  // a last line without '\n' still counts
  ++line_number_;
  return true;
}

}  // namespace ffnshape::data
