#include "hf_json_fields.h"

namespace ffnshape::hf {

std::string join_path(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

std::string brief(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 160 ? text.substr(0, 157) + "..." : text;
}

const json& JsonFields::required(const json& object, const std::string& key, const std::string& path) const {
  expect(object.is_object(), path.empty() ? "(top level)" : path, "an object", object);
  const auto found = object.find(key);
  if (found == object.end()) {
    throw invalid(join_path(path, key), "is missing", "a tokenizer.json saved by the tokenizers package has it");
  }
  return *found;
}

std::string JsonFields::string(const json& object, const std::string& key, const std::string& path) const {
  const json& value = required(object, key, path);
  expect(value.is_string(), join_path(path, key), "a string", value);
  return value.get<std::string>();
}

bool JsonFields::boolean(const json& object, const std::string& key, const std::string& path, bool fallback) const {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) return fallback;
  expect(found->is_boolean(), join_path(path, key), "true or false", *found);
  return found->get<bool>();
}

uint32_t JsonFields::id(const json& value, const std::string& path) const {
  expect(value.is_number_unsigned() && value.get<uint64_t>() < (uint64_t{1} << 31), path, "a token id (0 or more)",
         value);
  return value.get<uint32_t>();
}

std::string JsonFields::type(const json& object, const std::string& path, const std::string& fallback) const {
  expect(object.is_object(), path, "an object", object);
  const auto found = object.find("type");
  if (found == object.end()) return fallback;
  expect(found->is_string(), join_path(path, "type"), "a string", *found);
  return found->get<std::string>();
}

void JsonFields::expect(bool ok, const std::string& path, const std::string& expected, const json& value) const {
  if (!ok) throw invalid(path, "should be " + expected + ", not " + brief(value), "correct the file (or save it again with tokenizers)");
}

DataError JsonFields::unsupported(const std::string& path, const json& value, const std::string& fix) const {
  return DataError(origin_ + ": " + path + " = " + brief(value) + " is not supported\n  fix: " + fix);
}

DataError JsonFields::invalid(const std::string& path, const std::string& problem, const std::string& fix) const {
  return DataError(origin_ + ": " + path + " " + problem + "\n  fix: " + fix);
}

}  // namespace ffnshape::hf
