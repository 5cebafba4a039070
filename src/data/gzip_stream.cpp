// gzip through zlib's inflate; concatenated members (as `cat a.gz b.gz` makes) read as one stream.
#include <zlib.h>

#include <vector>

#include "byte_stream.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::data {
namespace {

class GzipStream : public ByteStream {
 public:
  GzipStream(std::unique_ptr<ByteStream> raw, std::string path)
      : raw_(std::move(raw)), path_(std::move(path)), input_(kReadBlockBytes) {
    // 15 + 32: a 32 KiB window, gzip or zlib header detected automatically.
    if (inflateInit2(&z_, 15 + 32) != Z_OK) fail("zlib could not start");
  }
  ~GzipStream() override { inflateEnd(&z_); }

  size_t read(char* out, size_t capacity) override {
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(capacity);
    while (z_.avail_out == capacity && !finished_) {
      const bool at_eof = z_.avail_in == 0 && !refill();
      if (at_eof && at_member_end_) {
        finished_ = true;
        break;
      }
      if (at_member_end_) {  // another member follows
        inflateReset(&z_);
        at_member_end_ = false;
      }
      const int status = inflate(&z_, Z_NO_FLUSH);
      if (status == Z_STREAM_END) {
        at_member_end_ = true;
      } else if (status == Z_BUF_ERROR && at_eof) {  // no input left and no progress possible
        fail("ends in the middle of the compressed data (truncated?)");
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        fail(std::string("is not valid gzip data (") + (z_.msg ? z_.msg : "corrupt") + ")");
      }
    }
    return capacity - z_.avail_out;
  }

 private:
  bool refill() {
    const size_t n = raw_->read(input_.data(), input_.size());
    z_.next_in = reinterpret_cast<Bytef*>(input_.data());
    z_.avail_in = static_cast<uInt>(n);
    return n > 0;
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(path_ + ": " + problem + "\n  fix: recompress or re-download the file, or pass --skip-bad to skip it");
  }

  std::unique_ptr<ByteStream> raw_;
  std::string path_;
  std::vector<char> input_;
  z_stream z_{};
  bool at_member_end_ = false, finished_ = false;
};

}  // namespace

std::unique_ptr<ByteStream> open_gzip_stream(std::unique_ptr<ByteStream> raw, const std::string& path) {
  return std::make_unique<GzipStream>(std::move(raw), path);
}

}  // namespace ffnshape::data
