// TensorBoard event files: the CRC-32C of TFRecord framing against its published check value, and the
// writer's resume rule (keep the records through the resumed step, drop later and torn ones). That
// tensorboard's own readers read the files, with the values of metrics.jsonl, is
// tests/cli_tensorboard_test.sh's part.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../src/common/crc32c.h"
#include "../src/train/tensorboard_writer.h"
#include "ffnshape/train/data_error.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using ffnshape::TensorBoardWriter;
using ffnshape::read_event_records;

namespace {

fs::path only_event_file(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? fs::path() : files[0];
}

}  // namespace

TEST(TensorBoard, Crc32cMatchesItsCheckValue) {
  // The CRC-32C catalogue's check value (RFC 3720 B.4 uses the same polynomial): "123456789".
  EXPECT_EQ(ffnshape::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(ffnshape::crc32c("", 0), 0u);
  // RFC 3720 B.4: 32 bytes of zeros, and 32 bytes of 0xFF.
  unsigned char bytes[32];
  std::memset(bytes, 0, sizeof bytes);
  EXPECT_EQ(ffnshape::crc32c(bytes, sizeof bytes), 0x8A9136AAu);
  std::memset(bytes, 0xFF, sizeof bytes);
  EXPECT_EQ(ffnshape::crc32c(bytes, sizeof bytes), 0x62A8AB43u);
}

TEST(TensorBoard, ResumeKeepsRecordsThroughTheResumedStepAndDropsATornTail) {
  ffnshape::testing::TempDir dir;
  const auto tb = dir.path() / "tb";
  {
    TensorBoardWriter writer(tb, 0);
    writer.text("config", "model: {}", 0);
    for (int step = 1; step <= 10; ++step) writer.scalar("train/loss", 1.0 / step, step);
  }
  const auto file = only_event_file(tb);
  EXPECT_EQ(read_event_records(file).events.size(), 12u);  // file version, text, 10 scalars
  const auto complete = fs::file_size(file);
  std::ofstream(file, std::ios::app | std::ios::binary) << std::string("\x10\x00\x00\x00\x00", 5);  // a torn record
  EXPECT_EQ(read_event_records(file).valid_bytes, complete);

  {
    TensorBoardWriter writer(tb, 6);  // resumed from the checkpoint of step 6
    EXPECT_EQ(writer.path(), file);   // one file per run: appended to
    EXPECT_EQ(read_event_records(file).events.size(), 8u);
    EXPECT_EQ(fs::file_size(file), read_event_records(file).valid_bytes);
    for (int step = 7; step <= 8; ++step) writer.scalar("train/loss", 1.0 / step, step);
  }
  EXPECT_EQ(read_event_records(file).events.size(), 10u);

  TensorBoardWriter fresh(tb, 0);  // a run from step 0 starts a new file in place of the old one
  EXPECT_EQ(only_event_file(tb), fresh.path());
  EXPECT_EQ(read_event_records(fresh.path()).events.size(), 1u);  // its file version
}

TEST(TensorBoard, AFolderThatCannotBeWrittenIsADataError) {
  ffnshape::testing::TempDir dir;
  std::ofstream(dir.file("tb")) << "a file where the folder should be";
  EXPECT_THROW(TensorBoardWriter(dir.path() / "tb", 0), ffnshape::DataError);
}
