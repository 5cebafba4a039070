// The safetensors reader and writer: round trips, a file written by Python's safetensors, sharded
// folders, and every kind of malformed file refused with a message naming the file and the problem.
// Also the staged folders that export and import write into (complete or absent, never half).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "../src/common/text_file.h"
#include "ffnshape/interop/safetensors.h"
#include "ffnshape/train/data_error.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using ffnshape::DataError;
using ffnshape::interop::SafetensorsCheckpoint;
using ffnshape::interop::SafetensorsFile;
using ffnshape::interop::write_safetensors;
using ffnshape::testing::TempDir;

namespace {

// A file of an 8-byte header length, the header text and `data` bytes.
std::string raw_file(const TempDir& dir, const std::string& header, size_t data_bytes, uint64_t header_length = 0) {
  const auto path = dir.file("raw.safetensors");
  std::ofstream out(path, std::ios::binary);
  const uint64_t length = header_length ? header_length : header.size();
  out.write(reinterpret_cast<const char*>(&length), 8);
  out << header << std::string(data_bytes, '\0');
  return path;
}

void expect_refused(const std::string& path, const std::string& problem) {
  try {
    SafetensorsFile file(path);
    ADD_FAILURE() << "accepted a file that should be refused for: " << problem;
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
    EXPECT_NE(message.find("fix:"), std::string::npos) << message;
  }
}

}  // namespace

TEST(Safetensors, RoundTripKeepsValuesDtypesAndMetadata) {
  TempDir dir;
  torch::manual_seed(0);
  const std::vector<std::pair<std::string, torch::Tensor>> tensors = {
      {"w.f32", torch::randn({3, 5})},
      {"w.bf16", torch::randn({4}).to(torch::kBFloat16)},
      {"w.f16", torch::randn({2, 2, 2}).to(torch::kHalf)},
      {"w.f64", torch::randn({1}, torch::kDouble)},
      {"ids", torch::arange(7, torch::kLong)},
      {"empty", torch::zeros({0, 3})},
      {"strided", torch::randn({4, 6}).t()}};  // not contiguous: written in row-major order
  write_safetensors(dir.file("m.safetensors"), tensors, {{"format", "pt"}});
  SafetensorsFile file(dir.file("m.safetensors"));
  EXPECT_EQ(file.names().size(), tensors.size());
  EXPECT_EQ(file.metadata().at("format"), "pt");
  for (const auto& [name, t] : tensors) {
    const auto read = file.tensor(name);
    EXPECT_EQ(read.scalar_type(), t.scalar_type()) << name;
    EXPECT_TRUE(torch::equal(read, t)) << name;
  }
  uint64_t header = 0;
  std::ifstream(dir.file("m.safetensors"), std::ios::binary).read(reinterpret_cast<char*>(&header), 8);
  EXPECT_EQ(header % 8, 0u);  // data starts aligned, as the reference writer does
  EXPECT_THROW(file.tensor("absent"), DataError);
  EXPECT_THROW(write_safetensors(dir.file("x.safetensors"), {{"a", torch::ones(1)}, {"a", torch::ones(1)}}),
               std::invalid_argument);
}

TEST(Safetensors, ReadsAFileWrittenByPythonSafetensors) {
  SafetensorsFile file(std::string(FFNSHAPE_SOURCE_DIR) + "/tests/fixtures/python_written.safetensors");
  const auto values = torch::arange(6, torch::kDouble).reshape({2, 3}) * 0.5 - 1.0;
  EXPECT_EQ(file.metadata().at("writer"), "safetensors");
  EXPECT_TRUE(torch::equal(file.tensor("a.f32"), values.to(torch::kFloat)));
  EXPECT_TRUE(torch::equal(file.tensor("b.f16"), values.to(torch::kHalf)));
  EXPECT_TRUE(torch::equal(file.tensor("c.bf16"), values.to(torch::kBFloat16)));
  EXPECT_TRUE(torch::equal(file.tensor("d.f64"), values));
  EXPECT_TRUE(torch::equal(file.tensor("e.i64"), torch::tensor({1, -2, 3}, torch::kLong)));
  EXPECT_EQ(file.tensor("f.scalar").dim(), 0);
  EXPECT_EQ(file.tensor("f.scalar").item<float>(), 7.25f);
}

TEST(Safetensors, RefusesMalformedFiles) {
  TempDir dir;
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  {
    const auto path = dir.file("short.safetensors");
    std::ofstream(path, std::ios::binary) << "abc";
    expect_refused(path, "shorter than the 8-byte header length");
  }
  expect_refused(raw_file(dir, ok, 8, 1u << 20), "header length 1048576 reaches beyond");
  expect_refused(raw_file(dir, ok, 8, ~0ull), "reaches beyond");
  expect_refused(raw_file(dir, "{\"a\": [1, 2", 0), "the header is not JSON");
  expect_refused(raw_file(dir, "[1, 2]", 0), "not a JSON object");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 8), "unknown dtype 'Q4'");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", 8), "has no \"shape\"");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), "non-negative integer");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8), "end before they begin");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 12), "need 12");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8),
                 "more than 2^64");
  expect_refused(raw_file(dir, ok, 4), "truncated");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[1000000,1000008]}})", 8), "truncated");
  expect_refused(raw_file(dir, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12),
                 "'a' and 'b' overlap");
  expect_refused(raw_file(dir, R"({"__metadata__":{"k":1}})", 0), "is not a string");
}

TEST(Safetensors, RefusesAPythonFileCutShort) {
  TempDir dir;
  const auto path = dir.file("cut.safetensors");
  fs::copy_file(std::string(FFNSHAPE_SOURCE_DIR) + "/tests/fixtures/python_written.safetensors", path);
  fs::resize_file(path, fs::file_size(path) - 4);
  expect_refused(path, "truncated");
}

TEST(Safetensors, ReadsShardedFoldersThroughTheirIndex) {
  TempDir dir;
  write_safetensors(dir.file("model-00001-of-00002.safetensors"), {{"a", torch::ones({2})}});
  write_safetensors(dir.file("model-00002-of-00002.safetensors"), {{"b", torch::full({3}, 2.0)}});
  std::ofstream(dir.file("model.safetensors.index.json"))
      << R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})";
  SafetensorsCheckpoint ckpt(dir.path().string());
  EXPECT_EQ(ckpt.shard_count(), 2u);
  EXPECT_EQ(ckpt.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(torch::equal(ckpt.tensor("b"), torch::full({3}, 2.0)));

  std::ofstream(dir.file("model.safetensors.index.json"))
      << R"({"weight_map": {"a": "model-00002-of-00002.safetensors"}})";
  EXPECT_THROW(SafetensorsCheckpoint{dir.path().string()}, DataError);
  std::ofstream(dir.file("model.safetensors.index.json")) << R"({"weight_map": {"a": "../elsewhere.safetensors"}})";
  EXPECT_THROW(SafetensorsCheckpoint{dir.path().string()}, DataError);
  std::ofstream(dir.file("model.safetensors.index.json")) << R"({"weight_map": {"a": "absent.safetensors"}})";
  EXPECT_THROW(SafetensorsCheckpoint{dir.path().string()}, DataError);
  fs::remove(dir.file("model.safetensors.index.json"));
  EXPECT_THROW(SafetensorsCheckpoint{dir.path().string()}, DataError);
}

// --- staged output folders ------------------------------------------------------------------------

TEST(StagedFolder, CommitRenamesTheCompleteFolderIntoPlace) {
  TempDir dir;
  const auto final_dir = dir.path() / "export";
  {
    ffnshape::StagedFolder staged(final_dir);
    EXPECT_EQ(staged.path(), dir.path() / "export.partial");
    std::ofstream(staged.path() / "a.txt") << "alpha";
    EXPECT_FALSE(fs::exists(final_dir));  // nothing under the final name until commit
    staged.commit();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "export.partial"));
  std::ifstream in(final_dir / "a.txt");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "alpha");
}

TEST(StagedFolder, AFailureBeforeCommitLeavesNothing) {
  TempDir dir;
  const auto final_dir = dir.path() / "export";
  try {
    ffnshape::StagedFolder staged(final_dir);
    std::ofstream(staged.path() / "model.safetensors") << "half a file";
    throw std::runtime_error("disk full");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(fs::exists(final_dir));
  EXPECT_FALSE(fs::exists(dir.path() / "export.partial"));
  // A rerun is therefore not refused, and it replaces the empty folder a user may have made.
  fs::create_directories(final_dir);
  ffnshape::StagedFolder again(final_dir);
  std::ofstream(again.path() / "b.txt") << "beta";
  again.commit();
  EXPECT_TRUE(fs::is_regular_file(final_dir / "b.txt"));
}

TEST(StagedFolder, ReplacesAPartialFolderOfAKilledProcessAndRefusesAFullOne) {
  TempDir dir;
  const auto final_dir = dir.path() / "run";
  fs::create_directories(dir.path() / "run.partial");
  std::ofstream(dir.path() / "run.partial" / "stale.bin") << "from a killed import";
  {
    ffnshape::StagedFolder staged(final_dir);
    EXPECT_FALSE(fs::exists(staged.path() / "stale.bin"));
    staged.commit();
  }
  EXPECT_TRUE(fs::is_directory(final_dir));
  std::ofstream(final_dir / "config.yaml") << "model: {}";
  try {
    ffnshape::StagedFolder refused(final_dir);
    FAIL() << "a folder with a file in it was taken as an output folder";
  } catch (const DataError& e) {  // the importers' and the exporter's message, with the fix
    EXPECT_NE(std::string(e.what()).find("already exists and is not empty; nothing was written"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fix: give a new --out folder"), std::string::npos);
  }
  EXPECT_TRUE(fs::is_regular_file(final_dir / "config.yaml"));  // untouched
}
