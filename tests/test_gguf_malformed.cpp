// Malformed GGUF files: every one refused with a DataError that names the file, the problem and a
// fix; truncations and corruptions of a real file never crash nor read outside it.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "ffnshape/interop/gguf.h"
#include "ffnshape/train/data_error.h"
#include "gguf_bytes.h"
#include "temp_dir.h"

using namespace ffnshape;
using namespace ffnshape::interop;
using ffnshape::testing::GgufBytes;
using ffnshape::testing::TempDir;

namespace {

const std::string kFixture = std::string(FFNSHAPE_SOURCE_DIR) + "/tests/fixtures/gguf/tensors.gguf";

// Opens `bytes` as DIR/model.gguf, reads every tensor, and returns the DataError's message ("" if none).
std::string error_of(const std::string& bytes) {
  TempDir dir("ffnshape_gguf");
  const std::string path = dir.file("model.gguf");
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  try {
    GgufFile file(path);
    for (const auto& name : file.tensor_names()) {
      if (file.tensor_info(name).readable()) file.tensor(name);
    }
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(path + ": ", 0), 0u) << m;          // names the file first
    EXPECT_NE(m.find("\n  fix: "), std::string::npos) << m;  // and says what to do
    return m;
  }
  return "";
}

#define EXPECT_REFUSED(bytes, text)                                              \
  do {                                                                           \
    const std::string message_ = error_of(bytes);                               \
    EXPECT_NE(message_.find(text), std::string::npos) << "message: " << message_; \
  } while (0)

std::string f32_file(uint64_t offset, size_t data_bytes) {
  return GgufBytes().header(1, 0).tensor("w", {4, 2}, 0, offset).pad().zeros(data_bytes).bytes();
}

}  // namespace

TEST(GgufMalformed, HeaderProblems) {
  EXPECT_REFUSED("", "is empty");
  EXPECT_REFUSED("GGU", "ends early: the magic at byte 0 needs 4 bytes, but only 3 remain");
  EXPECT_REFUSED(GgufBytes().raw("GGUF").u32(3).u8(1).u8(0).bytes(),
                 "ends early: the tensor count at byte 8 needs 8 bytes, but only 2 remain");
  EXPECT_REFUSED(GgufBytes().raw("GGML").u32(3).u64(0).u64(0).bytes(),
                 "starts with the bytes 47 47 4d 4c, not the magic \"GGUF\"");
  EXPECT_REFUSED(GgufBytes().header(0, 0, 1).bytes(), "is GGUF version 1");
  EXPECT_REFUSED(GgufBytes().header(0, 0, 4).bytes(), "has GGUF version 4; versions 2 and 3 are supported");
  EXPECT_REFUSED(GgufBytes().header(0, 0, 3u << 24).bytes(), "is a big-endian GGUF file");
  EXPECT_EQ(error_of(GgufBytes().header(0, 0).bytes()), "");  // an empty model is well-formed
}

TEST(GgufMalformed, CountsAndLengthsPastTheEnd) {
  EXPECT_REFUSED(GgufBytes().header(0, 1ull << 40).bytes(),
                 "the metadata count at byte 16 is 1099511627776, more than the 0 remaining bytes can hold");
  EXPECT_REFUSED(GgufBytes().header(1ull << 60, 0).bytes(), "the tensor count at byte 8 is");
  EXPECT_REFUSED(GgufBytes().header(0, 1).u64(1000000).raw("general.name").bytes(),
                 "ends early: a metadata key at byte 32 (metadata entry 0) needs 1000000 bytes");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("general.name").u32(8).u64(99).raw("short").bytes(),
                 "a string at byte 56 (metadata key 'general.name') needs 99 bytes, but only 5 remain");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("tokens").u32(9).u32(8).u64(1ull << 32).str("a").bytes(),
                 "an array's length at byte 46 (metadata key 'tokens') is 4294967296, more than the 9");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("x").u32(4).u8(1).bytes(), "ends early: a uint32");
  EXPECT_REFUSED(GgufBytes().header(1, 0).str("w").u32(2).u64(4).bytes(),
                 "ends early: a dimension at byte 45 (tensor 'w')");
}

TEST(GgufMalformed, UnknownValueAndTensorTypes) {
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("k").u32(13).u32(0).bytes(),
                 "unknown metadata value type 13 (GGUF knows 0..12) (metadata key 'k')");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("k").u32(9).u32(77).u64(0).bytes(), "unknown metadata value type 77");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str(std::string("a\0b", 3)).u32(13).bytes(), "(metadata key 'a\\x00b')");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("k").u32(7).u8(2).bytes(), "a bool holds 2");
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {32}, 99, 0).pad().zeros(64).bytes(),
                 "has unknown ggml type id 99 (tensor 'w')");
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {32}, 4, 0).pad().zeros(64).bytes(), "unknown ggml type id 4");
  GgufBytes deep;
  deep.header(0, 1).str("k").u32(9);  // an array of arrays of ... of one uint32
  for (int i = 0; i < 40; ++i) deep.u32(i == 39 ? 4 : 9).u64(1);
  deep.u32(7);
  EXPECT_REFUSED(deep.bytes(), "arrays nested deeper than 16 levels");
}

TEST(GgufMalformed, TensorDataOutsideTheFile) {
  EXPECT_EQ(error_of(f32_file(0, 32)), "");
  EXPECT_REFUSED(f32_file(0, 31), "(tensor 'w')");
  EXPECT_REFUSED(f32_file(0, 31), "occupies bytes 96..128 but the file has 127 bytes");
  EXPECT_REFUSED(f32_file(1024, 32), "occupies bytes 1120..1152 but the file has 128 bytes");
  EXPECT_REFUSED(f32_file(~0ull - 31, 32), "occupies bytes");  // offset + size wraps around 2^64
  EXPECT_REFUSED(f32_file(16, 64), "starts at data offset 16, not a multiple of the alignment 32");
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {1ull << 62, 4}, 0, 0).pad().bytes(), "overflows int64");
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {1ull << 61}, 28, 0).pad().bytes(), "byte size that overflows");
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {1ull << 60}, 28, 0).pad().bytes(), "occupies bytes");
  EXPECT_REFUSED(GgufBytes().header(1, 0).str("w").u32(5).zeros(64).bytes(), "has 5 dimensions; ggml allows at most 4");
}

TEST(GgufMalformed, BlockCountsAndAlignment) {
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {33, 2}, 8, 0).pad().zeros(200).bytes(),
                 "is Q8_0 with rows of 33 elements, not a whole number of 32-element blocks (tensor 'w')");
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {16}, 3, 0).pad().zeros(64).bytes(),
                 "is Q4_1 with rows of 16 elements");
  EXPECT_REFUSED(GgufBytes().header(1, 0).tensor("w", {256}, 12, 0).pad().zeros(100).bytes(), "occupies bytes");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("general.alignment").u32(4).u32(24).bytes(),
                 "general.alignment is 24, not a positive power of two");
  EXPECT_REFUSED(GgufBytes().header(0, 1).str("general.alignment").u32(8).str("32").bytes(),
                 "general.alignment is string");
  EXPECT_REFUSED(GgufBytes().header(0, 2).str("a").u32(0).u8(1).str("a").u32(0).u8(2).bytes(), "appears twice");
  EXPECT_REFUSED(GgufBytes().header(2, 0).tensor("w", {32}, 0, 0).tensor("w", {32}, 0, 128).pad().zeros(256).bytes(),
                 "appears twice (tensor 'w')");
}

// Every prefix of a real file is refused with a DataError (none reads past its end).
TEST(GgufMalformed, EveryTruncationIsRefused) {
  std::ifstream in(kFixture, std::ios::binary);
  const std::string whole{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  GgufFile file(kFixture);
  uint64_t end = 0;  // the end of the last tensor's bytes (padding may follow)
  for (const auto& name : file.tensor_names()) {
    const auto& t = file.tensor_info(name);
    end = std::max(end, file.data_offset() + t.offset + t.bytes);
  }
  ASSERT_GT(end, 3000u);
  int accepted = 0;
  for (size_t n = 0; n < end; n += n < 1400 ? 1 : 37) accepted += error_of(whole.substr(0, n)).empty();
  EXPECT_EQ(accepted, 0);
}

// Random byte changes anywhere: opening and reading either works or throws DataError, nothing else.
TEST(GgufMalformed, CorruptedBytesNeverCrash) {
  std::ifstream in(kFixture, std::ios::binary);
  const std::string whole{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::mt19937 rng(17);
  int refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes = whole;
    const size_t limit = trial % 2 ? bytes.size() : 1400;  // half of them in the header and metadata
    for (int k = 0; k < 1 + trial % 4; ++k) bytes[rng() % limit] = static_cast<char>(rng());
    refused += !error_of(bytes).empty();
  }
  EXPECT_GT(refused, 50);
}
