// Internal: CRC-32C (Castagnoli, the polynomial 0x1EDC6F41 reflected), the checksum of TFRecord
// files, which TensorBoard's event files are.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ffnshape {

// The CRC-32C of `size` bytes; crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const void* data, size_t size);

// TFRecord's masked form, so that a CRC stored beside the data it covers is not itself CRC-like:
// rotate right by 15, add 0xA282EAD8.
inline uint32_t masked_crc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

}  // namespace ffnshape
