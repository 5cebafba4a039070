// ggml's tensor types as stored in GGUF files: the block layout of every type id (to size and
// bounds-check any tensor), and float32 dequantization of the 32-element block types readable here.
#pragma once

#include <cstdint>
#include <string>

namespace ffnshape::interop::detail {

struct GgmlLayout {
  const char* name = nullptr;  // nullptr: an unknown or retired type id
  int64_t block_elements = 0;  // elements per block (1 for plain types)
  int64_t block_bytes = 0;     // bytes per block
};

// The layout of a ggml type id (ggml.h and the gguf package's GGML_QUANT_SIZES).
GgmlLayout ggml_layout(uint32_t type);

// Each writes `blocks` x 32 values from `blocks` consecutive blocks at `data`, computed in float32
// with the gguf package's arithmetic (fp16 scales widened exactly; products and sums rounded
// separately, never fused), then rounded to T (float, c10::BFloat16 or c10::Half) as torch's
// conversion does: no float32 tensor in between. Parallel over blocks.
template <class T>
void dequantize_q8_0(const unsigned char* data, int64_t blocks, T* out);
template <class T>
void dequantize_q4_0(const unsigned char* data, int64_t blocks, T* out);
template <class T>
void dequantize_q4_1(const unsigned char* data, int64_t blocks, T* out);

}  // namespace ffnshape::interop::detail
