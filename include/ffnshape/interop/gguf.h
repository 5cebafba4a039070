// GGUF, llama.cpp's checkpoint format (versions 2 and 3, little-endian): a header ("GGUF", version,
// tensor count, metadata count), typed metadata key-values, tensor infos (name, dims, ggml type,
// offset), then the tensor data, aligned to general.alignment (default 32) bytes.
//
// Opening checks the whole file before any tensor is read: a malformed file (bad magic, unsupported
// version, a count or string length running past the end, an unknown value or tensor type, a tensor
// whose bytes run past the end or that is not a whole number of blocks) is a DataError naming the
// file and the problem; no byte outside the file is ever read.
//
// Tensors dequantize exactly as ggml and the `gguf` Python package do: F32, F16, BF16 and the
// 32-element block types Q8_0 (x = d q), Q4_0 (x = d (q - 8)) and Q4_1 (x = d q + m), with fp16
// d and m. Other types (K-quants, IQ types, ...) are refused when read, naming the tensor and type.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ffnshape::interop {

// The value types of GGUF metadata, with their ids in the file.
enum class GgufType : uint32_t {
  uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6, boolean = 7,
  string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12,
};
const char* gguf_type_name(GgufType type);

// One metadata value. Accessors throw DataError when the value has another type; GgufFile's
// lookups add the file and key to that message.
class GgufValue {
 public:
  GgufType type() const { return type_; }
  GgufType element_type() const { return element_type_; }  // arrays only
  bool is_integer() const;                                   // any of the 8 integer types
  bool is_number() const { return is_integer() || type_ == GgufType::float32 || type_ == GgufType::float64; }

  int64_t integer() const;  // integer types; a uint64 above INT64_MAX is refused
  double number() const;    // integer or float types
  bool boolean() const;
  const std::string& string() const;
  const std::vector<GgufValue>& array() const;  // elements (nested arrays are arrays again)
  std::vector<std::string> strings() const;     // an array of strings
  std::vector<int64_t> integers() const;        // an array of integers
  std::vector<float> floats() const;            // an array of numbers, as float
  std::string describe() const;                 // "uint32", "an array of 49152 string", ...

  // Construction, for the reader.
  static GgufValue of_integer(GgufType type, int64_t value);
  static GgufValue of_unsigned(uint64_t value);  // uint64
  static GgufValue of_float(GgufType type, double value);
  static GgufValue of_bool(bool value);
  static GgufValue of_string(std::string value);
  static GgufValue of_array(GgufType element_type, std::vector<GgufValue> elements);

 private:
  explicit GgufValue(GgufType type) : type_(type) {}

  GgufType type_ = GgufType::uint8, element_type_ = GgufType::uint8;
  int64_t int_ = 0;
  uint64_t uint_ = 0;  // uint64 values
  double float_ = 0;
  std::string string_;
  std::vector<GgufValue> elements_;
};

// ggml tensor type ids (ggml.h's enum ggml_type); only the ones readable here are named.
enum class GgmlType : uint32_t { f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q8_0 = 8, bf16 = 30 };
// The ggml name of a type id ("Q4_K"), or "type N" when unknown.
std::string ggml_type_name(uint32_t type);

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> dims;   // GGUF order: dims[0] is the fastest-varying (a row's length)
  std::vector<int64_t> shape;  // PyTorch's row-major order: dims reversed
  uint32_t type = 0;           // a ggml type id (GgmlType for the readable ones)
  std::string type_name;       // "Q4_1"
  uint64_t offset = 0;         // from the start of the data section
  uint64_t bytes = 0;          // size of the stored data
  int64_t numel = 0;
  bool readable() const;       // one of the types tensor() dequantizes
};

// A memory-mapped GGUF file with validated header, metadata and tensor infos.
class GgufFile {
 public:
  explicit GgufFile(const std::string& path);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the data section

  // Metadata, keys in file order.
  const std::vector<std::string>& keys() const { return keys_; }
  bool has(const std::string& key) const { return metadata_.count(key) > 0; }
  const GgufValue* find(const std::string& key) const;  // nullptr when absent
  const GgufValue& value(const std::string& key) const;  // DataError when absent
  // Typed lookups: DataError naming the file and key when absent or of another type.
  std::string string(const std::string& key) const;
  int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  bool boolean(const std::string& key) const;
  std::vector<std::string> strings(const std::string& key) const;  // e.g. tokenizer.ggml.tokens
  std::vector<float> floats(const std::string& key) const;         // e.g. tokenizer.ggml.scores
  std::vector<int64_t> integers(const std::string& key) const;     // e.g. tokenizer.ggml.token_type

  // Tensors, names in file order.
  const std::vector<std::string>& tensor_names() const { return tensor_names_; }
  bool contains(const std::string& name) const { return tensors_.count(name) > 0; }
  const GgufTensorInfo& tensor_info(const std::string& name) const;  // DataError when absent
  // A fresh CPU tensor of `info.shape` holding the dequantized values in `dtype` (a floating type):
  // computed in float32 and rounded once to `dtype` (F16 / BF16 data read as kHalf / kBFloat16 is
  // copied bit for bit). DataError for a type not listed at the top.
  torch::Tensor tensor(const std::string& name, torch::ScalarType dtype = torch::kFloat) const;

 private:
  std::string path_;
  std::shared_ptr<const unsigned char> map_;  // the mapping, unmapped with the last owner
  uint64_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32, data_offset_ = 0;
  std::vector<std::string> keys_, tensor_names_;
  std::map<std::string, GgufValue> metadata_;
  std::map<std::string, GgufTensorInfo> tensors_;
};

}  // namespace ffnshape::interop
