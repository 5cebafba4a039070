#include "ffnshape/config/yaml_reader.h"

#include <cstdlib>

#include <fstream>
#include <sstream>

namespace ffnshape {
namespace {

std::vector<std::string> split_path(const std::string& dotted) {
  std::vector<std::string> keys;
  std::stringstream stream(dotted);
  std::string key;
  while (std::getline(stream, key, '.')) keys.push_back(key);
  return keys;
}

const char* type_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a section";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a value";
    default: return "nothing";
  }
}

}  // namespace

ConfigDocument ConfigDocument::from_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    throw ConfigError("", "cannot open config file '" + path + "'",
                      "check the path; configs ship under configs/ (demo/, paper/, reference/)");
  }
  std::stringstream text;
  text << file.rdbuf();
  return from_string(text.str(), path);
}

ConfigDocument ConfigDocument::from_string(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError("", "malformed YAML: " + e.msg, "fix the syntax at the line shown",
                      name + ":" + std::to_string(e.mark.line + 1));
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) {
    throw ConfigError("", std::string("the top level is ") + type_name(root) + ", not a set of sections",
                      "start the file with sections such as 'model:'", name);
  }
  return ConfigDocument(root, name);
}

void ConfigDocument::apply_override(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError("", "--set '" + assignment + "' is not of the form key=value",
                      "write e.g. --set model.d_model=512", "--set");
  }
  const std::string dotted = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(dotted, "the value '" + text + "' is not valid YAML (" + e.msg + ")",
                      "quote strings, and write lists as [1, 2, 3]", "--set");
  }
  const auto keys = split_path(dotted);
  YAML::Node current = root_;
  std::string walked;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    walked += (walked.empty() ? "" : ".") + keys[i];
    YAML::Node next = current[keys[i]];
    if (!next.IsDefined() || next.IsNull()) {
      current[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next = current[keys[i]];
    } else if (!next.IsMap()) {
      throw ConfigError(walked, std::string("is ") + type_name(next) + ", so '" + dotted + "' cannot be set",
                        "set " + walked + " itself, or check the key", "--set");
    }
    current.reset(next);
  }
  YAML::Node existing = current[keys.back()];
  if (existing.IsDefined() && existing.IsMap() && !value.IsMap()) {
    throw ConfigError(dotted, "is a section; it cannot be replaced by a single value",
                      "set one of its keys, e.g. --set " + dotted + ".KEY=VALUE", "--set");
  }
  current[keys.back()] = value;
  overridden_.insert(dotted);
}

void ConfigDocument::apply_overrides(const std::vector<std::string>& assignments) {
  for (const auto& assignment : assignments) apply_override(assignment);
}

std::string ConfigDocument::where(const std::string& dotted_path) const {
  // An override of this key or of a section above it wins.
  for (const auto& key : overridden_) {
    if (dotted_path == key || dotted_path.rfind(key + ".", 0) == 0) return "--set " + key;
  }
  // The line of the deepest key of the path that exists (marks sit on the key nodes).
  YAML::Node current = root_;
  int line = -1;
  for (auto key : split_path(dotted_path)) {
    // "arms[2]" names an item of a list.
    long index = -1;
    if (const auto open = key.find('['); open != std::string::npos && key.back() == ']') {
      index = std::strtol(key.c_str() + open + 1, nullptr, 10);
      key = key.substr(0, open);
    }
    if (!current.IsMap()) break;
    bool found = false;
    for (const auto& entry : current) {
      if (entry.first.Scalar() != key) continue;
      line = entry.first.Mark().line;
      current.reset(entry.second);
      found = true;
      break;
    }
    if (!found) break;
    if (index >= 0) {
      if (!current.IsSequence() || index >= static_cast<long>(current.size())) break;
      current.reset(current[static_cast<size_t>(index)]);
      if (current.Mark().line >= 0) line = current.Mark().line;
    }
  }
  return line >= 0 ? name_ + ":" + std::to_string(line + 1) : name_;
}

YamlSection::YamlSection(const ConfigDocument& doc, YAML::Node node, std::string path)
    : doc_(&doc), node_(std::move(node)), path_(std::move(path)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    throw ConfigError(path_, std::string("must be a section of keys, but is ") + type_name(node_),
                      "write it as '" + path_ + ":' followed by indented 'key: value' lines",
                      doc_->where(path_));
  }
}

bool YamlSection::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

ConfigError YamlSection::error(const std::string& key, const std::string& problem,
                               const std::string& hint) const {
  const std::string path = path_of(key);
  return ConfigError(path, problem, hint, doc_->where(path));
}

namespace {

// Converts a scalar node, turning yaml-cpp's conversion failure into a located ConfigError.
template <class T>
T convert_scalar(const YamlSection& section, const std::string& key, const YAML::Node& node,
                 const char* expected) {
  if (!node.IsScalar()) {
    throw section.error(key, std::string("must be ") + expected + ", but is " + type_name(node),
                        std::string("write a single ") + expected);
  }
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw section.error(key, std::string("must be ") + expected + ", but is '" + node.Scalar() + "'",
                        std::string("write ") + expected);
  }
}

template <class T>
std::vector<T> convert_list(const YamlSection& section, const std::string& key, const YAML::Node& node,
                            const char* expected) {
  if (!node.IsSequence()) {
    throw section.error(key, std::string("must be a list of ") + expected + ", but is " + type_name(node),
                        "write it as [a, b, c]");
  }
  std::vector<T> values;
  for (size_t i = 0; i < node.size(); ++i) {
    values.push_back(convert_scalar<T>(section, key + "[" + std::to_string(i) + "]", node[i], expected));
  }
  return values;
}

}  // namespace

#define FFNSHAPE_OPTIONAL(TYPE, CONVERT, EXPECTED)                                  \
  template <>                                                                     \
  std::optional<TYPE> YamlSection::optional<TYPE>(const std::string& key) {       \
    known_.insert(key);                                                           \
    if (!has(key)) return std::nullopt;                                           \
    return CONVERT(*this, key, node_[key], EXPECTED);                             \
  }

FFNSHAPE_OPTIONAL(int64_t, convert_scalar<int64_t>, "an integer")
FFNSHAPE_OPTIONAL(double, convert_scalar<double>, "a number")
FFNSHAPE_OPTIONAL(bool, convert_scalar<bool>, "true or false")
FFNSHAPE_OPTIONAL(std::string, convert_scalar<std::string>, "a string")
FFNSHAPE_OPTIONAL(std::vector<int64_t>, convert_list<int64_t>, "integers")
FFNSHAPE_OPTIONAL(std::vector<double>, convert_list<double>, "numbers")
FFNSHAPE_OPTIONAL(std::vector<std::string>, convert_list<std::string>, "strings")
#undef FFNSHAPE_OPTIONAL

YamlSection YamlSection::section(const std::string& key) {
  known_.insert(key);
  return YamlSection(*doc_, node_.IsMap() ? node_[key] : YAML::Node(), path_of(key));
}

std::vector<YamlSection> YamlSection::sections(const std::string& key) {
  known_.insert(key);
  std::vector<YamlSection> out;
  if (!has(key)) return out;
  const auto node = node_[key];
  if (!node.IsSequence()) {
    throw error(key, std::string("must be a list of mappings, but is ") + type_name(node), "write it as a list: - name: ...");
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const auto item_path = path_of(key) + "[" + std::to_string(i) + "]";
    if (!node[i].IsMap()) {
      throw ConfigError(item_path, std::string("must be a mapping, but is ") + type_name(node[i]), "write it as key: value pairs",
                        doc_->where(path_of(key)));
    }
    out.emplace_back(*doc_, node[i], item_path);
  }
  return out;
}

YAML::Node YamlSection::raw(const std::string& key) {
  known_.insert(key);
  return node_.IsMap() ? node_[key] : YAML::Node();
}

void YamlSection::finish() const {
  if (!node_.IsMap()) return;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) {  // "{[a, b]: 1}": YAML allows it, a config never means it
      throw error(YAML::Dump(entry.first), std::string("is not a key: a key is a name, and this one is ") +
                                               type_name(entry.first), "write the key as a plain word");
    }
    const auto key = entry.first.Scalar();
    if (known_.count(key)) continue;
    std::string known_list;
    for (const auto& k : known_) known_list += (known_list.empty() ? "" : ", ") + k;
    throw error(key, "unknown key", "remove it or correct the spelling; keys allowed here: " + known_list);
  }
}

}  // namespace ffnshape
