// Safetensors, the weight format of Hugging Face folders: an 8-byte little-endian header length N,
// N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]}} with an optional
// "__metadata__" object of strings, then the raw little-endian row-major bytes of every tensor
// (offsets count from the first byte after the header).
//
// Reading checks the whole header before any tensor is touched: a malformed file (header length
// beyond the file, a header that is not JSON, an unknown dtype, offsets out of range or overlapping,
// a byte range that does not match shape x dtype size, truncated data) is a DataError naming the
// file and the problem; no byte outside the file is ever read.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ffnshape::interop {

// One tensor's header entry. Offsets are relative to the start of the data section.
struct SafetensorsEntry {
  torch::ScalarType dtype = torch::kFloat;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// A memory-mapped .safetensors file with a validated header. Supported dtypes: F64, F32, F16, BF16,
// I64, I32, I16, I8, U8, BOOL.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return path_; }
  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  // DataError naming the file when `name` is not in it.
  const SafetensorsEntry& entry(const std::string& name) const;
  // A fresh CPU tensor holding a copy of the stored values, in the stored dtype.
  torch::Tensor tensor(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::string path_;
  std::shared_ptr<const unsigned char> map_;  // the mapping, unmapped with the last owner
  uint64_t size_ = 0;
  uint64_t data_start_ = 0;
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Writes `tensors` (any device; stored in their own dtype, names sorted) and `metadata` to `path`.
// A name given twice or an unsupported dtype is std::invalid_argument.
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The weights of a Hugging Face folder: model.safetensors, or the shards that
// model.safetensors.index.json lists in its weight_map. DataError when neither exists, a shard is
// missing or malformed, or a tensor of the index is not in its shard.
class SafetensorsCheckpoint {
 public:
  explicit SafetensorsCheckpoint(const std::string& dir);

  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return shard_of_.count(name) > 0; }
  const SafetensorsEntry& entry(const std::string& name) const;
  torch::Tensor tensor(const std::string& name) const;
  // The file that holds `name` (for messages).
  const std::string& file_of(const std::string& name) const;
  size_t shard_count() const { return shards_.size(); }

 private:
  const SafetensorsFile& shard(const std::string& name) const;

  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, size_t> shard_of_;
};

// "F32", "BF16", ... for a dtype the format knows; std::invalid_argument otherwise.
std::string safetensors_dtype_name(torch::ScalarType dtype);

}  // namespace ffnshape::interop
