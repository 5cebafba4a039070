// Internal: the bytes of one corpus file, read in blocks and decompressed on the way (gzip, zstd) so
// that a file of any size needs only a fixed read buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ffnshape::data {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Fills up to `capacity` bytes; 0 only at the end. A read error or a truncated or corrupt
  // compressed stream throws DataError naming the file.
  virtual size_t read(char* out, size_t capacity) = 0;
};

enum class Compression { none, gzip, zstd };

// From the file name: .gz -> gzip, .zst / .zstd -> zstd, anything else none.
Compression compression_of(const std::string& path);

// The file's plain bytes. DataError when it cannot be opened.
std::unique_ptr<ByteStream> open_byte_stream(const std::string& path);

// Internal constructors, one per translation unit.
std::unique_ptr<ByteStream> open_plain_stream(const std::string& path);
std::unique_ptr<ByteStream> open_gzip_stream(std::unique_ptr<ByteStream> raw, const std::string& path);
std::unique_ptr<ByteStream> open_zstd_stream(std::unique_ptr<ByteStream> raw, const std::string& path);

// The read buffer of every stream: the memory one open file costs (twice for compressed files).
constexpr size_t kReadBlockBytes = size_t{1} << 20;

}  // namespace ffnshape::data
