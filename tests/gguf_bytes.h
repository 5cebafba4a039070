// Hand-made GGUF bytes for the malformed-file tests: each field written explicitly, little-endian,
// so a test can get any single field wrong.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

namespace ffnshape::testing {

class GgufBytes {
 public:
  GgufBytes& raw(const std::string& s) { bytes_ += s; return *this; }
  GgufBytes& u8(uint8_t v) { return put(v); }
  GgufBytes& u32(uint32_t v) { return put(v); }
  GgufBytes& u64(uint64_t v) { return put(v); }
  GgufBytes& f32(float v) { return put(v); }
  GgufBytes& str(const std::string& s) { u64(s.size()); return raw(s); }
  // "GGUF", version, tensor count, metadata count.
  GgufBytes& header(uint64_t tensors, uint64_t keys, uint32_t version = 3) {
    return raw("GGUF").u32(version).u64(tensors).u64(keys);
  }
  // A tensor info: name, dims (GGUF order), ggml type id, data offset.
  GgufBytes& tensor(const std::string& name, std::initializer_list<uint64_t> dims, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (auto d : dims) u64(d);
    return u32(type).u64(offset);
  }
  // Zero bytes up to the next multiple of `alignment`, where the data section starts.
  GgufBytes& pad(size_t alignment = 32) {
    while (bytes_.size() % alignment) bytes_ += '\0';
    return *this;
  }
  GgufBytes& zeros(size_t n) { bytes_.append(n, '\0'); return *this; }
  const std::string& bytes() const { return bytes_; }

  void write(const std::string& path) const {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  }

 private:
  template <class T>
  GgufBytes& put(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    bytes_.append(b, sizeof(T));
    return *this;
  }
  std::string bytes_;
};

}  // namespace ffnshape::testing
