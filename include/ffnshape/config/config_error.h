// Errors in user configuration: they name the dotted key, where it came from, and how to fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace ffnshape {

class ConfigError : public std::runtime_error {
 public:
  // path: dotted key such as "model.ffn.hidden" (empty for whole-file problems);
  // where: "file.yaml:12", "--set", or empty; hint: one sentence on how to fix it.
  ConfigError(std::string path, std::string problem, std::string hint = "", std::string where = "");

  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  const std::string& hint() const { return hint_; }
  const std::string& where() const { return where_; }

  // The same error, located at `where` (used once the loader knows the file and line of `path`).
  ConfigError located(const std::string& where) const;

 private:
  std::string path_, problem_, hint_, where_;
};

}  // namespace ffnshape
