// Typed reads of tokenizer.json fields: a missing field or a wrong type is a DataError naming the
// file and the JSON path; an unsupported value is refused by name with the same precision.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ffnshape/train/data_error.h"

namespace ffnshape::hf {

using nlohmann::json;

class JsonFields {
 public:
  explicit JsonFields(std::string origin) : origin_(std::move(origin)) {}

  // The value at object[key] (path names the object), which must exist.
  const json& required(const json& object, const std::string& key, const std::string& path) const;
  std::string string(const json& object, const std::string& key, const std::string& path) const;
  bool boolean(const json& object, const std::string& key, const std::string& path, bool fallback) const;
  uint32_t id(const json& value, const std::string& path) const;
  // The object's "type", or `fallback` when absent.
  std::string type(const json& object, const std::string& path, const std::string& fallback = "") const;
  void expect(bool ok, const std::string& path, const std::string& expected, const json& value) const;

  DataError unsupported(const std::string& path, const json& value, const std::string& fix) const;
  DataError invalid(const std::string& path, const std::string& problem, const std::string& fix) const;
  const std::string& origin() const { return origin_; }

 private:
  std::string origin_;
};

std::string join_path(const std::string& path, const std::string& key);
std::string brief(const json& value);  // the value as JSON, cut to a readable length

}  // namespace ffnshape::hf
