#include <cerrno>
#include <cstdio>
#include <cstring>

#include "byte_stream.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::data {
namespace {

class PlainStream : public ByteStream {
 public:
  PlainStream(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  ~PlainStream() override { std::fclose(file_); }

  size_t read(char* out, size_t capacity) override {
    const size_t n = std::fread(out, 1, capacity, file_);
    if (n == 0 && std::ferror(file_)) {
      throw DataError(path_ + ": cannot read the file (" + std::strerror(errno) +
                      ")\n  fix: check the file and its permissions, or pass --skip-bad to skip it");
    }
    return n;
  }

 private:
  std::FILE* file_;
  std::string path_;
};

}  // namespace

std::unique_ptr<ByteStream> open_plain_stream(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    throw DataError(path + ": cannot open the file (" + std::strerror(errno) +
                    ")\n  fix: check the path and its permissions, or pass --skip-bad to skip it");
  }
  return std::make_unique<PlainStream>(file, path);
}

Compression compression_of(const std::string& path) {
  auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  if (ends_with(".gz")) return Compression::gzip;
  if (ends_with(".zst") || ends_with(".zstd")) return Compression::zstd;
  return Compression::none;
}

std::unique_ptr<ByteStream> open_byte_stream(const std::string& path) {
  auto raw = open_plain_stream(path);
  switch (compression_of(path)) {
    case Compression::gzip: return open_gzip_stream(std::move(raw), path);
    case Compression::zstd: return open_zstd_stream(std::move(raw), path);
    default: return raw;
  }
}

}  // namespace ffnshape::data
