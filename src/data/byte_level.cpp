// GPT-2's byte-to-character table (bytes_to_unicode): every byte is written as a printable
// character, so byte-level vocabularies are ordinary strings. Printable Latin-1 bytes stand for
// themselves; the other 68 take the code points 256, 257, ... in byte order.
#include <unordered_map>

#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {

bool stands_for_itself(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct ByteTable {
  std::array<std::string, 256> chars;
  std::array<int, 324> byte_of_code_point;  // -1 when the code point stands for no byte

  ByteTable() {
    byte_of_code_point.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const uint32_t code_point = stands_for_itself(b) ? static_cast<uint32_t>(b) : next++;
      append_utf8(chars[b], code_point);
      byte_of_code_point[code_point] = b;
    }
  }
};

const ByteTable& table() {
  static const ByteTable t;
  return t;
}

}  // namespace

const std::string& byte_char(uint8_t b) { return table().chars[b]; }

bool byte_chars_to_bytes(std::string_view token, std::string& bytes) {
  const auto& t = table();
  bytes.clear();
  for (size_t i = 0; i < token.size();) {
    size_t length = 0;
    const uint32_t c = code_point_at(token, i, &length);
    if (c >= t.byte_of_code_point.size() || t.byte_of_code_point[c] < 0) return false;
    bytes += static_cast<char>(t.byte_of_code_point[c]);
    i += length;
  }
  return true;
}

}  // namespace ffnshape::hf
