#include "tensorboard_writer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <system_error>

#include "../common/crc32c.h"
#include "../common/log.h"
#include "ffnshape/train/data_error.h"
#include "tensorboard_event.pb.h"

namespace fs = std::filesystem;

namespace ffnshape {
namespace {

namespace tb = ffnshape::tensorboard;

constexpr char kFilePrefix[] = "events.out.tfevents.";

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

uint64_t get_le(const std::string& in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return value;
}

// TFRecord: length (uint64 LE), masked CRC-32C of the length, the data, masked CRC-32C of the data.
std::string frame(const std::string& data) {
  std::string record;
  put_le(record, data.size(), 8);
  put_le(record, masked_crc32c(record.data(), 8), 4);
  record += data;
  put_le(record, masked_crc32c(data.data(), data.size()), 4);
  return record;
}

std::vector<fs::path> event_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().filename().string().rfind(kFilePrefix, 0) == 0) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());  // by creation time, which the names carry
  return files;
}

std::string new_file_name() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return kFilePrefix + std::to_string(static_cast<int64_t>(now_seconds())) + "." + host + ".ffnshape";
}

// Cuts `file` after its last record at or before `step` (records are in step order).
void keep_through_step(const fs::path& file, int64_t step) {
  const auto records = read_event_records(file);
  uint64_t keep = 0, offset = 0;
  for (const auto& data : records.events) {
    offset += data.size() + 16;
    tb::Event event;
    if (!event.ParseFromString(data) || event.step() > step) break;
    keep = offset;
  }
  if (keep < fs::file_size(file)) fs::resize_file(file, keep);
}

}  // namespace

EventRecords read_event_records(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EventRecords records;
  size_t at = 0;
  while (at + 12 <= bytes.size()) {
    const uint64_t length = get_le(bytes, at, 8);
    if (get_le(bytes, at + 8, 4) != masked_crc32c(bytes.data() + at, 8)) break;
    if (length > bytes.size() - at - 12 || bytes.size() - at - 12 - length < 4) break;  // torn
    const std::string data = bytes.substr(at + 12, length);
    if (get_le(bytes, at + 12 + length, 4) != masked_crc32c(data.data(), data.size())) break;
    records.events.push_back(data);
    at += 16 + length;
  }
  records.valid_bytes = at;
  return records;
}

TensorBoardWriter::TensorBoardWriter(const fs::path& dir, int64_t resumed_step) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto files = event_files(dir);
  if (resumed_step > 0 && !files.empty()) {
    // One file per run: earlier processes of this run appended to the newest.
    path_ = files.back();
    keep_through_step(path_, resumed_step);
  } else {
    for (const auto& old : files) fs::remove(old, ec);
    path_ = dir / new_file_name();
  }
  const bool fresh = !fs::exists(path_) || fs::file_size(path_) == 0;
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) {
    throw DataError("cannot write the TensorBoard event file " + path_.string() +
                    "\n  fix: check that the run folder is writable, or set log.tensorboard: false");
  }
  if (fresh) {
    tb::Event event;
    event.set_wall_time(now_seconds());
    event.set_file_version("brain.Event:2");
    append(event.SerializeAsString());
  }
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_) std::fclose(file_);
}

void TensorBoardWriter::scalar(const std::string& tag, double value, int64_t step) {
  tb::Event event;
  event.set_wall_time(now_seconds());
  event.set_step(step);
  auto* entry = event.mutable_summary()->add_value();
  entry->set_tag(tag);
  entry->set_simple_value(static_cast<float>(value));  // no metadata: TensorBoard's scalars plugin claims these
  append(event.SerializeAsString());
}

void TensorBoardWriter::text(const std::string& tag, const std::string& markdown, int64_t step) {
  tb::Event event;
  event.set_wall_time(now_seconds());
  event.set_step(step);
  auto* entry = event.mutable_summary()->add_value();
  entry->set_tag(tag);
  entry->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  entry->mutable_metadata()->set_data_class(tb::DATA_CLASS_TENSOR);
  auto* tensor = entry->mutable_tensor();
  tensor->set_dtype(tb::DT_STRING);
  tensor->mutable_tensor_shape();  // a scalar string: no dimensions
  tensor->add_string_val(markdown);
  append(event.SerializeAsString());
}

void TensorBoardWriter::append(const std::string& event) {
  if (failed_) return;
  const auto record = frame(event);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() || std::fflush(file_) != 0) {
    failed_ = true;
    log::warn("writing {} failed (is the disk full?): training goes on without TensorBoard events", path_.string());
  }
}

}  // namespace ffnshape
