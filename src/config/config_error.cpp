#include "ffnshape/config/config_error.h"

namespace ffnshape {
namespace {

std::string format(const std::string& path, const std::string& problem, const std::string& hint,
                   const std::string& where) {
  std::string text;
  if (!where.empty()) text += where + ": ";
  if (!path.empty()) text += path + ": ";
  text += problem;
  if (!hint.empty()) text += "\n  fix: " + hint;
  return text;
}

}  // namespace

ConfigError::ConfigError(std::string path, std::string problem, std::string hint, std::string where)
    : std::runtime_error(format(path, problem, hint, where)),
      path_(std::move(path)),
      problem_(std::move(problem)),
      hint_(std::move(hint)),
      where_(std::move(where)) {}

ConfigError ConfigError::located(const std::string& where) const {
  return ConfigError(path_, problem_, hint_, where);
}

}  // namespace ffnshape
