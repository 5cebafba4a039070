#include "gguf_blocks.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstring>

// x = d q + m must round the product before the sum, as numpy does; a fused multiply-add would
// differ in the last bit. GCC contracts only under -ffp-contract=fast (not its ISO default).
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

namespace ffnshape::interop::detail {
namespace {

constexpr int64_t kQK = 32;                // elements per block of Q8_0 / Q4_0 / Q4_1
constexpr int64_t kGrain = 4096;           // blocks per parallel task (128 Ki elements)

float half_at(const unsigned char* p) {
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return c10::detail::fp16_ieee_to_fp32_value(bits);
}

template <class Body>
void for_blocks(int64_t blocks, Body body) {
  at::parallel_for(0, blocks, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) body(b);
  });
}

}  // namespace

GgmlLayout ggml_layout(uint32_t type) {
  struct Entry {
    uint32_t id;
    GgmlLayout layout;
  };
  constexpr int64_t K = 256;  // QK_K, the super-block of the K-quants
  static const Entry table[] = {
      {0, {"F32", 1, 4}},         {1, {"F16", 1, 2}},
      {2, {"Q4_0", 32, 18}},      {3, {"Q4_1", 32, 20}},
      {6, {"Q5_0", 32, 22}},      {7, {"Q5_1", 32, 24}},
      {8, {"Q8_0", 32, 34}},      {9, {"Q8_1", 32, 40}},
      {10, {"Q2_K", K, 2 + 2 + K / 16 + K / 4}},
      {11, {"Q3_K", K, 2 + K / 4 + K / 8 + 12}},
      {12, {"Q4_K", K, 2 + 2 + K / 2 + 12}},
      {13, {"Q5_K", K, 2 + 2 + K / 2 + K / 8 + 12}},
      {14, {"Q6_K", K, 2 + K / 2 + K / 4 + K / 16}},
      {15, {"Q8_K", K, 4 + K + K / 8}},
      {16, {"IQ2_XXS", K, 2 + K / 4}},
      {17, {"IQ2_XS", K, 2 + K / 4 + K / 32}},
      {18, {"IQ3_XXS", K, 2 + K / 4 + K / 8}},
      {19, {"IQ1_S", K, 2 + K / 8 + K / 16}},
      {20, {"IQ4_NL", 32, 18}},
      {21, {"IQ3_S", K, 2 + K / 4 + K / 8 + K / 32 + 4}},
      {22, {"IQ2_S", K, 2 + K / 4 + K / 16}},
      {23, {"IQ4_XS", K, 2 + 2 + K / 2 + K / 64}},
      {24, {"I8", 1, 1}},         {25, {"I16", 1, 2}},
      {26, {"I32", 1, 4}},        {27, {"I64", 1, 8}},
      {28, {"F64", 1, 8}},        {29, {"IQ1_M", K, K / 8 + K / 16 + K / 32}},
      {30, {"BF16", 1, 2}},       {34, {"TQ1_0", K, 2 + 4 * 13}},
      {35, {"TQ2_0", K, 2 + 64}}, {39, {"MXFP4", 32, 1 + 16}},
      {40, {"NVFP4", 64, 4 + 32}}, {41, {"Q1_0", 128, 2 + 16}},
  };
  for (const auto& e : table) {
    if (e.id == type) return e.layout;
  }
  return {};
}

// Block: fp16 d, 32 int8 q.
template <class T>
void dequantize_q8_0(const unsigned char* data, int64_t blocks, T* out) {
  for_blocks(blocks, [&](int64_t b) {
    const unsigned char* block = data + b * 34;
    const float d = half_at(block);
    const auto* q = reinterpret_cast<const int8_t*>(block + 2);
    T* y = out + b * kQK;
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<T>(static_cast<float>(q[j]) * d);
  });
}

// Block: fp16 d, 16 bytes; element j < 16 is the low nibble of byte j, element 16 + j its high one.
template <class T>
void dequantize_q4_0(const unsigned char* data, int64_t blocks, T* out) {
  for_blocks(blocks, [&](int64_t b) {
    const unsigned char* block = data + b * 18;
    const float d = half_at(block);
    const unsigned char* qs = block + 2;
    T* y = out + b * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<T>(d * static_cast<float>(static_cast<int>(qs[j] & 0x0F) - 8));
      y[j + kQK / 2] = static_cast<T>(d * static_cast<float>(static_cast<int>(qs[j] >> 4) - 8));
    }
  });
}

// Block: fp16 d, fp16 m, 16 bytes of nibbles as in Q4_0.
template <class T>
void dequantize_q4_1(const unsigned char* data, int64_t blocks, T* out) {
  for_blocks(blocks, [&](int64_t b) {
    const unsigned char* block = data + b * 20;
    const float d = half_at(block);
    const float m = half_at(block + 2);
    const unsigned char* qs = block + 4;
    T* y = out + b * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<T>(d * static_cast<float>(qs[j] & 0x0F) + m);
      y[j + kQK / 2] = static_cast<T>(d * static_cast<float>(qs[j] >> 4) + m);
    }
  });
}

#define FFNSHAPE_GGUF_INSTANTIATE(T)                                                 \
  template void dequantize_q8_0<T>(const unsigned char*, int64_t, T*);               \
  template void dequantize_q4_0<T>(const unsigned char*, int64_t, T*);               \
  template void dequantize_q4_1<T>(const unsigned char*, int64_t, T*);
FFNSHAPE_GGUF_INSTANTIATE(float)
FFNSHAPE_GGUF_INSTANTIATE(c10::BFloat16)
FFNSHAPE_GGUF_INSTANTIATE(c10::Half)

}  // namespace ffnshape::interop::detail
