// zstd through libzstd's streaming decoder; several frames in one file read as one stream.
#include <zstd.h>

#include <vector>

#include "byte_stream.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::data {
namespace {

class ZstdStream : public ByteStream {
 public:
  ZstdStream(std::unique_ptr<ByteStream> raw, std::string path)
      : raw_(std::move(raw)), path_(std::move(path)), input_(kReadBlockBytes), stream_(ZSTD_createDStream()) {
    if (!stream_) fail("libzstd could not start");
  }
  ~ZstdStream() override { ZSTD_freeDStream(stream_); }

  size_t read(char* out, size_t capacity) override {
    ZSTD_outBuffer output{out, capacity, 0};
    while (output.pos == 0 && !finished_) {
      const bool at_eof = in_.pos == in_.size && !refill();
      if (at_eof && frame_remaining_ == 0) {  // 0: the last frame was complete
        finished_ = true;
        break;
      }
      const size_t result = ZSTD_decompressStream(stream_, &output, &in_);
      if (ZSTD_isError(result)) fail(std::string("is not valid zstd data (") + ZSTD_getErrorName(result) + ")");
      if (at_eof && output.pos == 0 && result != 0) fail("ends in the middle of a zstd frame (truncated?)");
      frame_remaining_ = result;
    }
    return output.pos;
  }

 private:
  bool refill() {
    const size_t n = raw_->read(input_.data(), input_.size());
    in_ = ZSTD_inBuffer{input_.data(), n, 0};
    return n > 0;
  }
  [[noreturn]] void fail(const std::string& problem) const {
    throw DataError(path_ + ": " + problem + "\n  fix: recompress or re-download the file, or pass --skip-bad to skip it");
  }

  std::unique_ptr<ByteStream> raw_;
  std::string path_;
  std::vector<char> input_;
  ZSTD_DStream* stream_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  size_t frame_remaining_ = 1;  // an empty file is not a complete frame
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<ByteStream> open_zstd_stream(std::unique_ptr<ByteStream> raw, const std::string& path) {
  return std::make_unique<ZstdStream>(std::move(raw), path);
}

}  // namespace ffnshape::data
