// GgufValue: one typed metadata value of a GGUF file.
#include <limits>

#include "ffnshape/interop/gguf.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::interop {
namespace {

[[noreturn]] void wrong_type(const GgufValue& value, const char* wanted) {
  throw DataError("is " + value.describe() + ", not " + wanted);
}

}  // namespace

const char* gguf_type_name(GgufType type) {
  static const char* const names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32", "float32",
                                      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  const auto i = static_cast<uint32_t>(type);
  return i < std::size(names) ? names[i] : "unknown";
}

bool GgufValue::is_integer() const {
  switch (type_) {
    case GgufType::uint8: case GgufType::int8: case GgufType::uint16: case GgufType::int16:
    case GgufType::uint32: case GgufType::int32: case GgufType::uint64: case GgufType::int64:
      return true;
    default:
      return false;
  }
}

int64_t GgufValue::integer() const {
  if (!is_integer()) wrong_type(*this, "an integer");
  if (type_ == GgufType::uint64) {
    if (uint_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw DataError("is the uint64 " + std::to_string(uint_) + ", beyond the int64 range");
    }
    return static_cast<int64_t>(uint_);
  }
  return int_;
}

double GgufValue::number() const {
  if (type_ == GgufType::float32 || type_ == GgufType::float64) return float_;
  if (type_ == GgufType::uint64) return static_cast<double>(uint_);
  if (!is_integer()) wrong_type(*this, "a number");
  return static_cast<double>(int_);
}

bool GgufValue::boolean() const {
  if (type_ != GgufType::boolean) wrong_type(*this, "a bool");
  return int_ != 0;
}

const std::string& GgufValue::string() const {
  if (type_ != GgufType::string) wrong_type(*this, "a string");
  return string_;
}

const std::vector<GgufValue>& GgufValue::array() const {
  if (type_ != GgufType::array) wrong_type(*this, "an array");
  return elements_;
}

std::vector<std::string> GgufValue::strings() const {
  if (type_ != GgufType::array || element_type_ != GgufType::string) wrong_type(*this, "an array of strings");
  std::vector<std::string> out;
  out.reserve(elements_.size());
  for (const auto& e : elements_) out.push_back(e.string_);
  return out;
}

std::vector<int64_t> GgufValue::integers() const {
  if (type_ != GgufType::array) wrong_type(*this, "an array of integers");
  std::vector<int64_t> out;
  out.reserve(elements_.size());
  for (const auto& e : elements_) {
    if (!e.is_integer()) wrong_type(*this, "an array of integers");
    out.push_back(e.integer());
  }
  return out;
}

std::vector<float> GgufValue::floats() const {
  if (type_ != GgufType::array) wrong_type(*this, "an array of numbers");
  std::vector<float> out;
  out.reserve(elements_.size());
  for (const auto& e : elements_) {
    if (!e.is_number()) wrong_type(*this, "an array of numbers");
    out.push_back(static_cast<float>(e.number()));
  }
  return out;
}

std::string GgufValue::describe() const {
  if (type_ != GgufType::array) return gguf_type_name(type_);
  return "an array of " + std::to_string(elements_.size()) + " " + gguf_type_name(element_type_);
}

GgufValue GgufValue::of_integer(GgufType type, int64_t value) {
  GgufValue v(type);
  v.int_ = value;
  return v;
}

GgufValue GgufValue::of_unsigned(uint64_t value) {
  GgufValue v(GgufType::uint64);
  v.uint_ = value;
  return v;
}

GgufValue GgufValue::of_float(GgufType type, double value) {
  GgufValue v(type);
  v.float_ = value;
  return v;
}

GgufValue GgufValue::of_bool(bool value) { return of_integer(GgufType::boolean, value ? 1 : 0); }

GgufValue GgufValue::of_string(std::string value) {
  GgufValue v(GgufType::string);
  v.string_ = std::move(value);
  return v;
}

GgufValue GgufValue::of_array(GgufType element_type, std::vector<GgufValue> elements) {
  GgufValue v(GgufType::array);
  v.element_type_ = element_type;
  v.elements_ = std::move(elements);
  return v;
}

}  // namespace ffnshape::interop
