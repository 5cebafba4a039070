// Strict reading of YAML configuration: every key is typed, located and accounted for.
//
// A ConfigDocument is a parsed file plus its --set overrides. A YamlSection reads one mapping of it:
// each get/optional/section call marks a key as known, and finish() rejects whatever key is left,
// naming its dotted path and line. This is how a typo in a config becomes an error instead of a
// silently ignored setting.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ffnshape/config/config_error.h"

namespace ffnshape {

class ConfigDocument {
 public:
  // Parses a YAML file; a missing file or malformed YAML is a ConfigError.
  static ConfigDocument from_file(const std::string& path);
  // Parses YAML text; `name` is used in messages in place of a file name.
  static ConfigDocument from_string(const std::string& text, const std::string& name = "<string>");

  // Applies "dotted.key=value" (value is YAML: 12, 1.5e-4, true, [1, 2], text). Creates missing
  // sections; replacing a section by a value, or a value by a section, is an error.
  void apply_override(const std::string& assignment);
  void apply_overrides(const std::vector<std::string>& assignments);

  const YAML::Node& root() const { return root_; }
  const std::string& name() const { return name_; }
  // "file.yaml:LINE" for a key read from the file, "--set key=..." for an override, the file name
  // when the key is absent.
  std::string where(const std::string& dotted_path) const;

 private:
  ConfigDocument(YAML::Node root, std::string name) : root_(std::move(root)), name_(std::move(name)) {}
  YAML::Node root_;
  std::string name_;
  std::set<std::string> overridden_;
};

class YamlSection {
 public:
  // `node` must be a mapping or null (an absent section reads as empty).
  YamlSection(const ConfigDocument& doc, YAML::Node node, std::string path);

  bool has(const std::string& key) const;
  template <class T>
  std::optional<T> optional(const std::string& key);
  template <class T>
  T get(const std::string& key, const T& fallback) {
    auto value = optional<T>(key);
    return value ? *value : fallback;
  }
  template <class T>
  T require(const std::string& key, const std::string& hint);
  YamlSection section(const std::string& key);
  // A list of mappings (e.g. an experiment's arms), each read as a section "key[i]".
  std::vector<YamlSection> sections(const std::string& key);
  // The raw node of a free-form value (e.g. a sweep grid), marked as known.
  YAML::Node raw(const std::string& key);

  // Throws for the first key that no call above asked for.
  void finish() const;

  std::string path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  // A ConfigError located at this section's key.
  ConfigError error(const std::string& key, const std::string& problem, const std::string& hint) const;

 private:
  const ConfigDocument* doc_;
  YAML::Node node_;
  std::string path_;
  std::set<std::string> known_;
};

// Supported value types (defined in yaml_reader.cpp).
template <> std::optional<int64_t> YamlSection::optional<int64_t>(const std::string&);
template <> std::optional<double> YamlSection::optional<double>(const std::string&);
template <> std::optional<bool> YamlSection::optional<bool>(const std::string&);
template <> std::optional<std::string> YamlSection::optional<std::string>(const std::string&);
template <> std::optional<std::vector<int64_t>> YamlSection::optional<std::vector<int64_t>>(const std::string&);
template <> std::optional<std::vector<double>> YamlSection::optional<std::vector<double>>(const std::string&);
template <> std::optional<std::vector<std::string>> YamlSection::optional<std::vector<std::string>>(const std::string&);

template <class T>
T YamlSection::require(const std::string& key, const std::string& hint) {
  auto value = optional<T>(key);
  if (!value) throw error(key, "is required", hint);
  return *value;
}

}  // namespace ffnshape
