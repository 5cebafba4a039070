#include "ffnshape/interop/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "ffnshape/train/data_error.h"

namespace fs = std::filesystem;

namespace ffnshape::interop {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; so must the host be");

// The reference implementation's limit: a larger header is a corrupt length field, not a real header.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

const std::vector<std::pair<const char*, torch::ScalarType>>& dtype_names() {
  static const std::vector<std::pair<const char*, torch::ScalarType>> names = {
      {"F64", torch::kDouble}, {"F32", torch::kFloat},  {"F16", torch::kHalf}, {"BF16", torch::kBFloat16},
      {"I64", torch::kLong},   {"I32", torch::kInt},    {"I16", torch::kShort}, {"I8", torch::kChar},
      {"U8", torch::kByte},    {"BOOL", torch::kBool}};
  return names;
}

[[noreturn]] void refuse(const std::string& path, const std::string& problem) {
  throw DataError("safetensors file '" + path + "' is malformed: " + problem +
                  "\n  fix: re-download or re-export the file; it is not in the safetensors format");
}

// Element count x element size, or nothing when it overflows 64 bits.
std::optional<uint64_t> byte_size(const std::vector<int64_t>& shape, size_t element_size) {
  uint64_t bytes = element_size;
  for (const int64_t d : shape) {
    const auto dim = static_cast<uint64_t>(d);
    if (dim != 0 && bytes > std::numeric_limits<uint64_t>::max() / dim) return std::nullopt;
    bytes *= dim;
  }
  return bytes;
}

SafetensorsEntry parse_entry(const std::string& path, const std::string& name, const nlohmann::json& j) {
  const std::string where = "tensor '" + name + "'";
  if (!j.is_object()) refuse(path, where + " is not a JSON object");
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!j.contains(key)) refuse(path, where + " has no \"" + key + "\"");
  }
  SafetensorsEntry e;
  const auto& dtype = j["dtype"];
  if (!dtype.is_string()) refuse(path, where + " has a dtype that is not a string");
  const auto known = std::find_if(dtype_names().begin(), dtype_names().end(),
                                  [&](const auto& d) { return dtype.get<std::string>() == d.first; });
  if (known == dtype_names().end()) refuse(path, where + " has unknown dtype '" + dtype.get<std::string>() + "'");
  e.dtype = known->second;
  const auto& shape = j["shape"];
  if (!shape.is_array()) refuse(path, where + " has a shape that is not a list");
  for (const auto& d : shape) {
    if (!d.is_number_unsigned()) refuse(path, where + " has a shape entry that is not a non-negative integer");
    const auto dim = d.get<uint64_t>();
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) refuse(path, where + " has a dimension too large");
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  const auto& offsets = j["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
    refuse(path, where + " needs data_offsets [begin, end] of two non-negative integers");
  }
  e.begin = offsets[0].get<uint64_t>();
  e.end = offsets[1].get<uint64_t>();
  if (e.end < e.begin) refuse(path, where + " has data_offsets that end before they begin");
  const auto expected = byte_size(e.shape, c10::elementSize(e.dtype));
  if (!expected || *expected != e.end - e.begin) {
    refuse(path, where + " spans " + std::to_string(e.end - e.begin) + " bytes, but its shape and dtype need " +
                     (expected ? std::to_string(*expected) : std::string("more than 2^64")));
  }
  return e;
}

// Every range inside the data section and no two overlapping (empty tensors take no bytes).
void check_ranges(const std::string& path, const std::map<std::string, SafetensorsEntry>& entries, uint64_t data_bytes) {
  std::vector<std::pair<const std::string*, const SafetensorsEntry*>> order;
  for (const auto& [name, e] : entries) {
    if (e.end > data_bytes) {
      refuse(path, "tensor '" + name + "' ends at data byte " + std::to_string(e.end) + ", but the file holds only " +
                       std::to_string(data_bytes) + " bytes of data (truncated?)");
    }
    if (e.end > e.begin) order.emplace_back(&name, &e);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i].second->begin < order[i - 1].second->end) {
      refuse(path, "tensors '" + *order[i - 1].first + "' and '" + *order[i].first + "' overlap");
    }
  }
}

}  // namespace

std::string safetensors_dtype_name(torch::ScalarType dtype) {
  for (const auto& [name, type] : dtype_names()) {
    if (type == dtype) return name;
  }
  throw std::invalid_argument(std::string("safetensors cannot store dtype ") + c10::toString(dtype));
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw DataError("cannot open '" + path + "': " + std::strerror(errno) + "\n  fix: check the path");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw DataError("'" + path + "' is not a regular file\n  fix: give a .safetensors file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      ::close(fd);
      throw DataError("cannot map '" + path + "': " + std::strerror(errno));
    }
    const uint64_t length = size_;
    map_ = std::shared_ptr<const unsigned char>(static_cast<const unsigned char*>(map),
                                                [length](const unsigned char* p) { ::munmap(const_cast<unsigned char*>(p), length); });
  }
  ::close(fd);  // the mapping stays valid

  if (size_ < 8) refuse(path, "it is " + std::to_string(size_) + " bytes long, shorter than the 8-byte header length");
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, map_.get(), 8);
  if (header_bytes > size_ - 8 || header_bytes > kMaxHeaderBytes) {
    refuse(path, "the header length " + std::to_string(header_bytes) + " reaches beyond the file's " +
                     std::to_string(size_) + " bytes");
  }
  data_start_ = 8 + header_bytes;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(map_.get() + 8, map_.get() + data_start_);
  } catch (const nlohmann::json::exception& e) {
    refuse(path, std::string("the header is not JSON (") + e.what() + ")");
  }
  if (!header.is_object()) refuse(path, "the header is not a JSON object");
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) refuse(path, "__metadata__ is not an object");
      for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) refuse(path, "__metadata__ entry '" + key + "' is not a string");
        metadata_[key] = text.get<std::string>();
      }
      continue;
    }
    entries_[name] = parse_entry(path, name, value);
  }
  check_ranges(path, entries_, size_ - data_start_);
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& item : entries_) out.push_back(item.first);
  return out;
}

const SafetensorsEntry& SafetensorsFile::entry(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw DataError("tensor '" + name + "' is not in '" + path_ + "'");
  return it->second;
}

torch::Tensor SafetensorsFile::tensor(const std::string& name) const {
  const auto& e = entry(name);
  auto out = torch::empty(e.shape, torch::TensorOptions().dtype(e.dtype));
  // A copy rather than a view: offsets need not be aligned for the dtype, and the map may go away.
  if (e.end > e.begin) std::memcpy(out.data_ptr(), map_.get() + data_start_ + e.begin, e.end - e.begin);
  return out;
}

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::map<std::string, torch::Tensor> sorted;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || !sorted.emplace(name, t.detach().to(torch::kCPU).contiguous()).second) {
      throw std::invalid_argument("safetensors: tensor name '" + name + "' is reserved or given twice");
    }
  }
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : sorted) {
    const uint64_t bytes = t.numel() * t.element_size();
    header[name] = {{"dtype", safetensors_dtype_name(t.scalar_type())},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // pads so the data starts 8-byte aligned, as the reference does
  const uint64_t length = text.size();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&length), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [name, t] : sorted) {
    out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
  }
  out.close();
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

SafetensorsCheckpoint::SafetensorsCheckpoint(const std::string& dir) {
  const fs::path root(dir);
  const auto single = root / "model.safetensors";
  const auto index_path = root / "model.safetensors.index.json";
  if (fs::exists(single)) {
    shards_.push_back(std::make_unique<SafetensorsFile>(single.string()));
    for (const auto& name : shards_[0]->names()) shard_of_[name] = 0;
    return;
  }
  if (!fs::exists(index_path)) {
    throw DataError("'" + dir + "' has neither model.safetensors nor model.safetensors.index.json\n"
                    "  fix: give a Hugging Face model folder with safetensors weights (.bin weights are not read)");
  }
  nlohmann::json index;
  try {
    std::ifstream in(index_path);
    index = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw DataError("'" + index_path.string() + "' is not JSON: " + e.what() + "\n  fix: re-download the index");
  }
  if (!index.contains("weight_map") || !index["weight_map"].is_object()) {
    throw DataError("'" + index_path.string() + "' has no weight_map object\n  fix: re-download the index");
  }
  std::map<std::string, size_t> shard_index;
  for (const auto& [name, file] : index["weight_map"].items()) {
    const std::string shard_name = file.is_string() ? file.get<std::string>() : "";
    if (shard_name.empty() || fs::path(shard_name).filename() != shard_name) {
      throw DataError("'" + index_path.string() + "' maps '" + name + "' to '" + file.dump() +
                      "', not a file name in the folder\n  fix: re-download the index");
    }
    auto [it, added] = shard_index.emplace(shard_name, shards_.size());
    if (added) shards_.push_back(std::make_unique<SafetensorsFile>((root / shard_name).string()));
    if (!shards_[it->second]->contains(name)) {
      throw DataError("'" + index_path.string() + "' places '" + name + "' in " + shard_name +
                      ", which does not hold it\n  fix: re-download the shards and their index together");
    }
    shard_of_[name] = it->second;
  }
}

std::vector<std::string> SafetensorsCheckpoint::names() const {
  std::vector<std::string> out;
  for (const auto& item : shard_of_) out.push_back(item.first);
  return out;
}

const SafetensorsFile& SafetensorsCheckpoint::shard(const std::string& name) const {
  const auto it = shard_of_.find(name);
  if (it == shard_of_.end()) throw DataError("tensor '" + name + "' is not in the checkpoint");
  return *shards_[it->second];
}

const SafetensorsEntry& SafetensorsCheckpoint::entry(const std::string& name) const { return shard(name).entry(name); }
torch::Tensor SafetensorsCheckpoint::tensor(const std::string& name) const { return shard(name).tensor(name); }
const std::string& SafetensorsCheckpoint::file_of(const std::string& name) const { return shard(name).path(); }

}  // namespace ffnshape::interop
