#include "ffnshape/interop/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "ffnshape/train/data_error.h"
#include "gguf_blocks.h"

namespace ffnshape::interop {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "GGUF files here are little-endian; so must the host be");

constexpr uint64_t kMaxDims = 4;   // GGML_MAX_DIMS
constexpr int kMaxNesting = 16;    // arrays of arrays: deeper is a corrupt file, not a real one
constexpr const char* kRedo = "the file is truncated or corrupt; download it again or convert it again with llama.cpp";

// Same layout as the loader's messages: "PATH: problem\n  fix: hint".
DataError data_error(const std::string& path, const std::string& problem, const std::string& hint) {
  return DataError(path + ": " + problem + "\n  fix: " + hint);
}

std::string str(uint64_t n) { return std::to_string(n); }

// A key or tensor name read from the file, fit for a message: control bytes escaped (a NUL would cut
// the message short), and at most 100 bytes.
std::string printable(const std::string& name) {
  std::string out;
  for (const unsigned char c : name.substr(0, 100)) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  return name.size() > 100 ? out + "..." : out;
}

// Bounds-checked little-endian reads from the mapping. `context_` names what is being read (a
// metadata key, a tensor) for the message; it is built once per item, not per read.
class Reader {
 public:
  Reader(const unsigned char* data, uint64_t size, const std::string& path) : data_(data), size_(size), path_(path) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  void set_context(std::string context) { context_ = std::move(context); }

  void need(uint64_t bytes, const char* what) const {
    if (bytes <= left()) return;
    throw data_error(path_, "ends early: " + std::string(what) + " at byte " + str(pos_) + context_ + " needs " +
                                str(bytes) + " bytes, but only " + str(left()) + " remain",
                     kRedo);
  }
  template <class T>
  T scalar(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string string(const char* what) {
    const auto length = scalar<uint64_t>(what);
    need(length, what);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length;
    return s;
  }
  // A count of items of at least `min_bytes` each, refused when they cannot fit in what is left.
  uint64_t count(const char* what, uint64_t min_bytes) {
    const auto n = scalar<uint64_t>(what);
    if (min_bytes > 0 && n > left() / min_bytes) {
      throw data_error(path_, std::string(what) + " at byte " + str(pos_ - 8) + context_ + " is " + str(n) +
                                  ", more than the " + str(left()) + " remaining bytes can hold",
                       kRedo);
    }
    return n;
  }
  [[noreturn]] void fail(const std::string& problem, const std::string& hint = kRedo) const {
    throw data_error(path_, problem + context_, hint);
  }

 private:
  const unsigned char* data_;
  uint64_t size_, pos_ = 0;
  const std::string& path_;
  std::string context_;
};

// The smallest encoding of a value of `type` (to bound array counts); 0 for an unknown type.
uint64_t min_value_bytes(GgufType type) {
  switch (type) {
    case GgufType::uint8: case GgufType::int8: case GgufType::boolean: return 1;
    case GgufType::uint16: case GgufType::int16: return 2;
    case GgufType::uint32: case GgufType::int32: case GgufType::float32: return 4;
    case GgufType::uint64: case GgufType::int64: case GgufType::float64: case GgufType::string: return 8;
    case GgufType::array: return 12;
  }
  return 0;
}

GgufType value_type(Reader& in, const char* what) {
  const auto id = in.scalar<uint32_t>(what);
  if (min_value_bytes(static_cast<GgufType>(id)) == 0) {
    in.fail("unknown metadata value type " + str(id) + " (GGUF knows 0..12)");
  }
  return static_cast<GgufType>(id);
}

GgufValue read_value(Reader& in, GgufType type, int depth) {
  switch (type) {
    case GgufType::uint8: return GgufValue::of_integer(type, in.scalar<uint8_t>("a uint8"));
    case GgufType::int8: return GgufValue::of_integer(type, in.scalar<int8_t>("an int8"));
    case GgufType::uint16: return GgufValue::of_integer(type, in.scalar<uint16_t>("a uint16"));
    case GgufType::int16: return GgufValue::of_integer(type, in.scalar<int16_t>("an int16"));
    case GgufType::uint32: return GgufValue::of_integer(type, in.scalar<uint32_t>("a uint32"));
    case GgufType::int32: return GgufValue::of_integer(type, in.scalar<int32_t>("an int32"));
    case GgufType::uint64: return GgufValue::of_unsigned(in.scalar<uint64_t>("a uint64"));
    case GgufType::int64: return GgufValue::of_integer(type, in.scalar<int64_t>("an int64"));
    case GgufType::float32: return GgufValue::of_float(type, in.scalar<float>("a float32"));
    case GgufType::float64: return GgufValue::of_float(type, in.scalar<double>("a float64"));
    case GgufType::boolean: {
      const auto b = in.scalar<uint8_t>("a bool");
      if (b > 1) in.fail("a bool holds " + str(b) + " (0 or 1 expected)");
      return GgufValue::of_bool(b != 0);
    }
    case GgufType::string: return GgufValue::of_string(in.string("a string"));
    case GgufType::array: {
      if (depth >= kMaxNesting) in.fail("arrays nested deeper than " + std::to_string(kMaxNesting) + " levels");
      const GgufType element = value_type(in, "an array's element type");
      const uint64_t n = in.count("an array's length", min_value_bytes(element));
      std::vector<GgufValue> elements;
      elements.reserve(n);
      for (uint64_t i = 0; i < n; ++i) elements.push_back(read_value(in, element, depth + 1));
      return GgufValue::of_array(element, std::move(elements));
    }
  }
  in.fail("unknown metadata value type " + str(static_cast<uint32_t>(type)));
}

// Opens and maps `path` read-only; the returned pointer unmaps when its last copy goes.
std::shared_ptr<const unsigned char> map_file(const std::string& path, uint64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    const int err = errno;
    throw data_error(path, err == ENOENT ? "no such file" : std::string("cannot open: ") + std::strerror(err),
                     "check the path of the .gguf file");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) {
    ::close(fd);
    throw data_error(path, "is empty or cannot be read", "check the path of the .gguf file");
  }
  size = static_cast<uint64_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (map == MAP_FAILED) {
    throw data_error(path, std::string("cannot mmap: ") + std::strerror(err), "check memory limits (ulimit -v)");
  }
  return {static_cast<const unsigned char*>(map), [size](const unsigned char* p) { ::munmap(const_cast<unsigned char*>(p), size); }};
}

void check_magic_and_version(Reader& in, const unsigned char* data, uint32_t& version) {
  in.need(4, "the magic");
  if (std::memcmp(data, "GGUF", 4) != 0) {
    char bytes[16];
    std::snprintf(bytes, sizeof bytes, "%02x %02x %02x %02x", data[0], data[1], data[2], data[3]);
    in.fail(std::string("starts with the bytes ") + bytes + ", not the magic \"GGUF\"",
            "this is not a GGUF file (llama.cpp's format); pass a .gguf file");
  }
  in.scalar<uint32_t>("the magic");
  version = in.scalar<uint32_t>("the version");
  if (version == 2 || version == 3) return;
  if (version == 1) {
    in.fail("is GGUF version 1 (llama.cpp before August 2023); versions 2 and 3 are supported",
            "convert the model again with a current llama.cpp (convert_hf_to_gguf.py)");
  }
  const uint32_t swapped = __builtin_bswap32(version);
  if (swapped == 2 || swapped == 3) {
    in.fail("is a big-endian GGUF file; only little-endian ones are supported",
            "convert the model again for a little-endian machine (llama.cpp's convert_hf_to_gguf.py)");
  }
  in.fail("has GGUF version " + str(version) + "; versions 2 and 3 are supported",
          "convert the model again with llama.cpp's convert_hf_to_gguf.py");
}


void read_metadata(Reader& in, uint64_t n_keys, std::vector<std::string>& keys, std::map<std::string, GgufValue>& metadata) {
  for (uint64_t i = 0; i < n_keys; ++i) {
    in.set_context(" (metadata entry " + str(i) + ")");
    std::string key = in.string("a metadata key");
    in.set_context(" (metadata key '" + printable(key) + "')");
    const GgufType type = value_type(in, "a value type");
    GgufValue value = read_value(in, type, 0);
    if (!metadata.emplace(key, std::move(value)).second) in.fail("appears twice");
    keys.push_back(std::move(key));
  }
  in.set_context("");
}

// general.alignment: an integer power of two (llama.cpp's rule), 32 when absent.
uint64_t alignment_of(const std::map<std::string, GgufValue>& metadata, Reader& in) {
  const auto it = metadata.find("general.alignment");
  if (it == metadata.end()) return 32;
  const GgufValue& v = it->second;
  const bool small_integer = v.is_integer() && v.type() != GgufType::uint64;
  const int64_t a = small_integer ? v.integer() : 0;
  if (a <= 0 || (a & (a - 1)) != 0) {
    in.fail("general.alignment is " + (small_integer ? std::to_string(a) : v.describe()) +
            ", not a positive power of two");
  }
  return static_cast<uint64_t>(a);
}

GgufTensorInfo read_tensor_info(Reader& in, uint64_t i) {
  in.set_context(" (tensor info " + str(i) + ")");
  GgufTensorInfo t;
  t.name = in.string("a tensor name");
  in.set_context(" (tensor '" + printable(t.name) + "')");
  const auto n_dims = in.scalar<uint32_t>("the number of dimensions");
  if (n_dims > kMaxDims) in.fail("has " + str(n_dims) + " dimensions; ggml allows at most " + str(kMaxDims));
  uint64_t numel = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const auto dim = in.scalar<uint64_t>("a dimension");
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (dim != 0 && numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / dim)) {
      in.fail("has dimensions whose product overflows int64");
    }
    numel *= dim;
    t.dims.push_back(static_cast<int64_t>(dim));
  }
  t.shape.assign(t.dims.rbegin(), t.dims.rend());
  t.numel = static_cast<int64_t>(numel);
  t.type = in.scalar<uint32_t>("the tensor type");
  const auto layout = detail::ggml_layout(t.type);
  if (!layout.name) in.fail("has unknown ggml type id " + str(t.type));
  t.type_name = layout.name;
  const int64_t row = t.dims.empty() ? 1 : t.dims[0];
  if (row % layout.block_elements != 0) {
    in.fail("is " + t.type_name + " with rows of " + std::to_string(row) + " elements, not a whole number of " +
            std::to_string(layout.block_elements) + "-element blocks");
  }
  const uint64_t blocks = numel / layout.block_elements;
  if (blocks > std::numeric_limits<uint64_t>::max() / layout.block_bytes) in.fail("has a byte size that overflows");
  t.bytes = blocks * layout.block_bytes;
  t.offset = in.scalar<uint64_t>("the tensor's data offset");
  return t;
}

// The tensor's bytes must lie inside the file, at an aligned offset.
void check_data_range(const GgufTensorInfo& t, uint64_t data_offset, uint64_t alignment, uint64_t size, Reader& in) {
  if (t.offset % alignment != 0) {
    in.fail("starts at data offset " + str(t.offset) + ", not a multiple of the alignment " + str(alignment));
  }
  const uint64_t room = size > data_offset ? size - data_offset : 0;
  if (t.offset > room || t.bytes > room - t.offset) {
    in.fail("occupies bytes " + str(data_offset + t.offset) + ".." + str(data_offset + t.offset + t.bytes) +
            " but the file has " + str(size) + " bytes");
  }
}

template <class T>
void dequantize_into(GgmlType type, const unsigned char* data, int64_t blocks, T* out) {
  if (type == GgmlType::q8_0) detail::dequantize_q8_0(data, blocks, out);
  if (type == GgmlType::q4_0) detail::dequantize_q4_0(data, blocks, out);
  if (type == GgmlType::q4_1) detail::dequantize_q4_1(data, blocks, out);
}

}  // namespace

std::string ggml_type_name(uint32_t type) {
  const auto layout = detail::ggml_layout(type);
  return layout.name ? layout.name : "type " + str(type);
}

bool GgufTensorInfo::readable() const {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32: case GgmlType::f16: case GgmlType::bf16:
    case GgmlType::q8_0: case GgmlType::q4_0: case GgmlType::q4_1:
      return true;
  }
  return false;
}

}  // namespace ffnshape::interop

namespace ffnshape::interop {

GgufFile::GgufFile(const std::string& path) : path_(path) {
  map_ = map_file(path_, size_);
  Reader in(map_.get(), size_, path_);
  check_magic_and_version(in, map_.get(), version_);
  const uint64_t n_tensors = in.count("the tensor count", 24);  // name length, type, offset, n_dims
  const uint64_t n_keys = in.count("the metadata count", 13);   // key length, type, one byte
  read_metadata(in, n_keys, keys_, metadata_);
  alignment_ = alignment_of(metadata_, in);
  std::vector<GgufTensorInfo> infos;
  infos.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) infos.push_back(read_tensor_info(in, i));
  data_offset_ = (in.pos() + alignment_ - 1) / alignment_ * alignment_;
  for (auto& t : infos) {
    in.set_context(" (tensor '" + printable(t.name) + "')");
    check_data_range(t, data_offset_, alignment_, size_, in);
    tensor_names_.push_back(t.name);
    if (!tensors_.emplace(t.name, std::move(t)).second) in.fail("appears twice");
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GgufValue& GgufFile::value(const std::string& key) const {
  if (const GgufValue* v = find(key)) return *v;
  throw data_error(path_, "has no metadata key '" + key + "'",
                   "list its keys with gguf-dump (pip install gguf); the file may be of another architecture");
}

namespace {

// A typed lookup: the value's type error, with the file and key in front.
template <class Get>
auto typed(const GgufFile& file, const std::string& key, Get get) -> decltype(get(file.value(key))) {
  const GgufValue& value = file.value(key);
  try {
    return get(value);
  } catch (const DataError& e) {
    throw data_error(file.path(), "metadata key '" + key + "' " + e.what(),
                     "the file does not follow llama.cpp's conventions for this key; check it with gguf-dump");
  }
}

}  // namespace

std::string GgufFile::string(const std::string& key) const {
  return typed(*this, key, [](const GgufValue& v) { return v.string(); });
}
int64_t GgufFile::integer(const std::string& key) const {
  return typed(*this, key, [](const GgufValue& v) { return v.integer(); });
}
double GgufFile::number(const std::string& key) const {
  return typed(*this, key, [](const GgufValue& v) { return v.number(); });
}
bool GgufFile::boolean(const std::string& key) const {
  return typed(*this, key, [](const GgufValue& v) { return v.boolean(); });
}
std::vector<std::string> GgufFile::strings(const std::string& key) const {
  return typed(*this, key, [](const GgufValue& v) { return v.strings(); });
}
std::vector<float> GgufFile::floats(const std::string& key) const {
  return typed(*this, key, [](const GgufValue& v) { return v.floats(); });
}
std::vector<int64_t> GgufFile::integers(const std::string& key) const {
  return typed(*this, key, [](const GgufValue& v) { return v.integers(); });
}

const GgufTensorInfo& GgufFile::tensor_info(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it != tensors_.end()) return it->second;
  throw data_error(path_, "has no tensor '" + name + "'", "list its tensors with gguf-dump (pip install gguf)");
}

torch::Tensor GgufFile::tensor(const std::string& name, torch::ScalarType dtype) const {
  TORCH_CHECK(at::isFloatingType(dtype), "GgufFile::tensor: dtype must be a floating type, not ", dtype);
  const GgufTensorInfo& t = tensor_info(name);
  const unsigned char* data = map_.get() + data_offset_ + t.offset;
  const int64_t blocks = t.numel / 32;
  if (!t.readable()) {
    throw data_error(path_, "tensor '" + name + "' is " + t.type_name +
                                ", which ffnshape cannot dequantize (F32, F16, BF16, Q8_0, Q4_0 and Q4_1 only)",
                     "requantize the model to Q8_0 or Q4_1 with llama.cpp's llama-quantize, or convert it "
                     "with convert_hf_to_gguf.py --outtype f16");
  }
  const auto type = static_cast<GgmlType>(t.type);
  if (type == GgmlType::f32 || type == GgmlType::f16 || type == GgmlType::bf16) {
    const auto stored = type == GgmlType::f16 ? torch::kHalf : type == GgmlType::bf16 ? torch::kBFloat16 : torch::kFloat;
    torch::Tensor out = torch::empty(t.shape, stored);
    if (t.bytes > 0) std::memcpy(out.data_ptr(), data, t.bytes);  // a copy: the tensor outlives the mapping
    return out.scalar_type() == dtype ? out : out.to(dtype);
  }
  // Block types straight into the wanted dtype where the kernels can (no float32 copy in between).
  const bool direct = dtype == torch::kFloat || dtype == torch::kBFloat16 || dtype == torch::kHalf;
  torch::Tensor out = torch::empty(t.shape, direct ? dtype : torch::kFloat);
  switch (out.scalar_type()) {
    case torch::kBFloat16: dequantize_into(type, data, blocks, out.data_ptr<c10::BFloat16>()); break;
    case torch::kHalf: dequantize_into(type, data, blocks, out.data_ptr<c10::Half>()); break;
    default: dequantize_into(type, data, blocks, out.data_ptr<float>());
  }
  return out.scalar_type() == dtype ? out : out.to(dtype);
}

}  // namespace ffnshape::interop
