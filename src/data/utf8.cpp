// UTF-8 checks and repair for the tokenizer: the maximal-subpart rule of Unicode (chapter 3, "U+FFFD
// substitution of maximal subparts"), which Python's "replace" error handler and Rust's
// String::from_utf8_lossy both follow.
#include <cstring>

#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {

// The length of the valid sequence at text[i], or 0 with *consumed = the length of the maximal
// invalid subpart (at least 1).
size_t valid_sequence_at(std::string_view text, size_t i, size_t* consumed) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
  } else {
    *consumed = 1;
    return 0;
  }
  for (size_t k = 1; k < length; ++k) {
    const bool in_range = i + k < text.size() && (k == 1 ? byte(i + k) >= low && byte(i + k) <= high
                                                         : byte(i + k) >= 0x80 && byte(i + k) <= 0xBF);
    if (!in_range) {
      *consumed = k;
      return 0;
    }
  }
  return length;
}

bool all_ascii(std::string_view text) {
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if (word & 0x8080808080808080ull) return false;
  }
  for (; i < text.size(); ++i) {
    if (static_cast<uint8_t>(text[i]) >= 0x80) return false;
  }
  return true;
}

}  // namespace

std::string_view valid_utf8(std::string_view text, std::string& scratch) {
  if (all_ascii(text)) return text;
  size_t i = 0, consumed = 0;
  while (i < text.size()) {
    const size_t length = valid_sequence_at(text, i, &consumed);
    if (length == 0) break;
    i += length;
  }
  if (i == text.size()) return text;
  scratch.assign(text.substr(0, i));
  while (i < text.size()) {
    const size_t length = valid_sequence_at(text, i, &consumed);
    if (length > 0) {
      scratch.append(text.substr(i, length));
      i += length;
    } else {
      scratch.append("\xEF\xBF\xBD");  // U+FFFD
      i += consumed;
    }
  }
  return scratch;
}

uint32_t code_point_at(std::string_view text, size_t i, size_t* length) {
  const auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(text[i + k])); };
  const uint32_t lead = byte(0);
  if (lead < 0x80) {
    *length = 1;
    return lead;
  }
  if (lead < 0xE0) {
    *length = 2;
    return ((lead & 0x1F) << 6) | (byte(1) & 0x3F);
  }
  if (lead < 0xF0) {
    *length = 3;
    return ((lead & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
  }
  *length = 4;
  return ((lead & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
}

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool is_unicode_white_space(uint32_t c) {
  // PropList.txt, White_Space (unchanged since Unicode 6.3).
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

}  // namespace ffnshape::hf
