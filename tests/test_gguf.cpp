// GGUF reading: metadata of every value type, tensor infos, and dequantization bit for bit equal to
// the gguf package's (tests/fixtures/gguf, written by tests/gguf_reference.py); malformed files refused
// with a DataError naming the problem, never read out of bounds. Regenerate the fixtures with
//   .venv/bin/python tests/gguf_reference.py fixtures tests/fixtures/gguf
#include <gtest/gtest.h>

#include <filesystem>
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

const std::string kFixtures = std::string(FFNSHAPE_SOURCE_DIR) + "/tests/fixtures/gguf/";
const std::vector<std::string> kReadable = {"f32", "f32_1d", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q4_1_3d"};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Equal bit patterns (NaN-safe, and -0 differs from 0).
bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  const auto as_int = a.element_size() == 4 ? torch::kInt : a.element_size() == 2 ? torch::kShort : torch::kLong;
  return torch::equal(a.contiguous().view(as_int), b.contiguous().view(as_int));
}

}  // namespace

TEST(GgufFile, ReadsMetadataOfEveryType) {
  GgufFile f(kFixtures + "tensors.gguf");
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.keys().front(), "general.architecture");
  EXPECT_EQ(f.string("general.architecture"), "llama");
  EXPECT_EQ(f.integer("test.uint8"), 200);
  EXPECT_EQ(f.integer("test.int8"), -100);
  EXPECT_EQ(f.integer("test.uint16"), 60000);
  EXPECT_EQ(f.integer("test.int16"), -30000);
  EXPECT_EQ(f.integer("test.uint32"), 4000000000LL);
  EXPECT_EQ(f.integer("test.int32"), -2000000000);
  EXPECT_EQ(f.value("test.uint64").type(), GgufType::uint64);
  EXPECT_EQ(f.number("test.uint64"), 18000000000000000000.0);
  EXPECT_EQ(f.integer("test.int64"), -9000000000000000000LL);
  EXPECT_EQ(f.number("test.float32"), static_cast<double>(0.1f));
  EXPECT_EQ(f.number("test.float64"), 0.1);
  EXPECT_EQ(f.number("test.int8"), -100.0);
  EXPECT_TRUE(f.boolean("test.bool"));
  EXPECT_EQ(f.string("test.string"), "h\xc3\xa9llo \xe2\x96\x81w\xc3\xb6rld");
  EXPECT_EQ(f.string("test.empty_string"), "");
  EXPECT_EQ(f.strings("test.strings"), (std::vector<std::string>{"<unk>", "<s>", "\xe2\x96\x81the", ""}));
  EXPECT_EQ(f.floats("test.floats"), (std::vector<float>{0.0f, -1.5f, 3.25e-5f}));
  EXPECT_EQ(f.integers("test.ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f.value("test.ints").element_type(), GgufType::int32);
  EXPECT_EQ(f.integers("test.bytes"), (std::vector<int64_t>{1, 2, 255}));
  EXPECT_EQ(f.value("test.bytes").element_type(), GgufType::uint8);
  const auto& bools = f.value("test.bools").array();
  ASSERT_EQ(bools.size(), 3u);
  EXPECT_TRUE(bools[0].boolean() && !bools[1].boolean() && bools[2].boolean());
  const auto& nested = f.value("test.nested").array();
  ASSERT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested[1].integers(), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(f.value("test.nested_strings").array()[0].strings(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.value("test.nested").describe(), "an array of 2 array");
  EXPECT_EQ(f.find("no.such.key"), nullptr);
}

TEST(GgufFile, TypedLookupsNameTheFileAndKey) {
  GgufFile f(kFixtures + "tensors.gguf");
  auto message = [&](auto lookup) {
    try {
      lookup();
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string wrong = message([&] { f.integer("test.string"); });
  EXPECT_NE(wrong.find("tensors.gguf: metadata key 'test.string' is string, not an integer"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("\n  fix: "), std::string::npos);
  EXPECT_NE(message([&] { f.strings("test.ints"); }).find("is an array of 3 int32, not an array of strings"),
            std::string::npos);
  EXPECT_NE(message([&] { f.integer("test.uint64"); }).find("beyond the int64 range"), std::string::npos);
  EXPECT_NE(message([&] { f.string("llama.rope.freq_base"); }).find("has no metadata key 'llama.rope.freq_base'"),
            std::string::npos);
  EXPECT_NE(message([&] { f.tensor_info("output.weight"); }).find("has no tensor 'output.weight'"), std::string::npos);
}

TEST(GgufFile, TensorInfosInFileOrderWithReversedShapes) {
  GgufFile f(kFixtures + "tensors.gguf");
  std::vector<std::string> names = kReadable;
  names.push_back("q4_k");
  EXPECT_EQ(f.tensor_names(), names);
  const auto& q = f.tensor_info("q4_1_3d");
  EXPECT_EQ(q.dims, (std::vector<int64_t>{64, 3, 2}));
  EXPECT_EQ(q.shape, (std::vector<int64_t>{2, 3, 64}));
  EXPECT_EQ(q.type, static_cast<uint32_t>(GgmlType::q4_1));
  EXPECT_EQ(q.type_name, "Q4_1");
  EXPECT_EQ(q.numel, 384);
  EXPECT_EQ(q.bytes, 12u * 20u);
  EXPECT_TRUE(q.readable());
  EXPECT_EQ(f.tensor_info("q8_0").bytes, 18u * 34u);
  EXPECT_EQ(f.tensor_info("f32_1d").shape, (std::vector<int64_t>{7}));
  EXPECT_FALSE(f.tensor_info("q4_k").readable());
  EXPECT_EQ(f.tensor_info("q4_k").type_name, "Q4_K");
  EXPECT_EQ(ggml_type_name(12), "Q4_K");
  EXPECT_EQ(ggml_type_name(99), "type 99");
}

TEST(GgufFile, DequantizesExactlyAsTheGgufPackage) {
  GgufFile f(kFixtures + "tensors.gguf"), ref(kFixtures + "reference.gguf");
  for (const auto& name : kReadable) {
    SCOPED_TRACE(name);
    const torch::Tensor expected = ref.tensor(name);
    const torch::Tensor ours = f.tensor(name);
    EXPECT_EQ(ours.scalar_type(), torch::kFloat);
    EXPECT_TRUE(same_bits(ours, expected));
    EXPECT_TRUE(same_bits(f.tensor(name, torch::kBFloat16), expected.to(torch::kBFloat16)));
    EXPECT_TRUE(same_bits(f.tensor(name, torch::kHalf), expected.to(torch::kHalf)));
    EXPECT_TRUE(same_bits(f.tensor(name, torch::kDouble), expected.to(torch::kDouble)));
  }
  // A block of equal values has scale 0: every element is m.
  EXPECT_TRUE(torch::all(f.tensor("q4_1")[0] == f.tensor("q4_1")[0][0]).item<bool>());
}

TEST(GgufFile, HalfAndBfloat16CopyTheStoredBits) {
  GgufFile f(kFixtures + "tensors.gguf"), ref(kFixtures + "reference.gguf");
  const torch::Tensor half = f.tensor("f16", torch::kHalf);
  EXPECT_EQ(half.scalar_type(), torch::kHalf);
  EXPECT_TRUE(same_bits(half, ref.tensor("f16").to(torch::kHalf)));  // fp16 -> fp32 -> fp16 is exact
  EXPECT_TRUE(std::isinf(half.flatten()[4].item<float>()));
  EXPECT_TRUE(std::signbit(half.flatten()[3].item<float>()));
  EXPECT_TRUE(same_bits(f.tensor("bf16", torch::kBFloat16), ref.tensor("bf16").to(torch::kBFloat16)));
}

TEST(GgufFile, VersionTwoReadsTheSame) {
  TempDir dir("ffnshape_gguf");
  std::string bytes = read_bytes(kFixtures + "tensors.gguf");
  bytes[4] = 2;
  write_bytes(dir.file("v2.gguf"), bytes);
  GgufFile v2(dir.file("v2.gguf")), v3(kFixtures + "tensors.gguf");
  EXPECT_EQ(v2.version(), 2u);
  EXPECT_EQ(v2.keys(), v3.keys());
  EXPECT_TRUE(same_bits(v2.tensor("q4_0"), v3.tensor("q4_0")));
}

TEST(GgufFile, UnsupportedTypeNamesTheTensorAndType) {
  GgufFile f(kFixtures + "tensors.gguf");
  try {
    f.tensor("q4_k");
    FAIL() << "Q4_K was dequantized";
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tensor 'q4_k' is Q4_K, which ffnshape cannot dequantize"), std::string::npos) << m;
    EXPECT_NE(m.find("fix: requantize"), std::string::npos) << m;
  }
}

// Many blocks, so the dequantization runs in parallel chunks: each element against the formula.
TEST(GgufFile, LargeQuantizedTensorsMatchTheBlockFormulas) {
  constexpr int64_t rows = 300, cols = 1024, blocks = rows * cols / 32;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  TempDir dir("ffnshape_gguf");
  for (uint32_t type : {2u, 3u, 8u}) {
    SCOPED_TRACE(ggml_type_name(type));
    const int64_t block_bytes = type == 2 ? 18 : type == 3 ? 20 : 34;
    std::string data(blocks * block_bytes, '\0');
    for (auto& c : data) c = static_cast<char>(byte(rng));
    for (int64_t b = 0; b < blocks; ++b) {  // finite fp16 scales: exponent bits below 31
      data[b * block_bytes + 1] &= 0x3f;
      if (type == 3) data[b * block_bytes + 3] &= 0x3f;
    }
    GgufBytes g;
    g.header(1, 0).tensor("w", {cols, rows}, type, 0).pad().raw(data);
    g.write(dir.file("big.gguf"));
    const GgufFile file(dir.file("big.gguf"));
    const torch::Tensor x = file.tensor("w").flatten();
    // Rounded straight from the block kernels as torch rounds float32.
    EXPECT_TRUE(same_bits(file.tensor("w", torch::kBFloat16).flatten(), x.to(torch::kBFloat16)));
    EXPECT_TRUE(same_bits(file.tensor("w", torch::kHalf).flatten(), x.to(torch::kHalf)));
    const float* y = x.data_ptr<float>();
    auto half = [&](int64_t at) {
      uint16_t bits;
      std::memcpy(&bits, data.data() + at, 2);
      return static_cast<float>(c10::Half(bits, c10::Half::from_bits()));
    };
    int64_t mismatches = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t at = b * block_bytes;
      const float d = half(at);
      for (int j = 0; j < 32; ++j) {
        float v;
        if (type == 8) {
          v = static_cast<float>(static_cast<int8_t>(data[at + 2 + j])) * d;
        } else {
          const auto q = static_cast<unsigned char>(data[at + (type == 3 ? 4 : 2) + j % 16]);
          const int nibble = j < 16 ? q & 0x0F : q >> 4;
          const float p = d * static_cast<float>(type == 2 ? nibble - 8 : nibble);
          v = type == 2 ? p : p + half(at + 2);
        }
        const float got = y[b * 32 + j];
        mismatches += std::memcmp(&v, &got, 4) != 0 && !(std::isnan(v) && std::isnan(got));
      }
    }
    EXPECT_EQ(mismatches, 0);
  }
}
