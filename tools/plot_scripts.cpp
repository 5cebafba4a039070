#include "plot_scripts.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace ffnshape::cli {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string executable_path() {
  std::error_code error;
  const auto self = fs::read_symlink("/proc/self/exe", error);
  return error ? "ffnshape" : self.string();
}

bool run_plot_script(const std::string& name, const std::vector<std::string>& args) {
  std::vector<fs::path> candidates;
  if (const char* dir = std::getenv("FFNSHAPE_SCRIPTS")) candidates.emplace_back(fs::path(dir) / name);
  const auto bin = fs::path(executable_path()).parent_path();
  candidates.push_back(bin / ".." / "scripts" / name);
  candidates.push_back(bin / ".." / "share" / "ffnshape" / "scripts" / name);
  fs::path script;
  for (const auto& c : candidates) {
    if (fs::exists(c)) {
      script = c;
      break;
    }
  }
  if (script.empty()) {
    std::cerr << "warning: plots skipped: scripts/" << name << " was not found (set FFNSHAPE_SCRIPTS to its folder)\n";
    return false;
  }
  // Debian's python3 has matplotlib; a python3 first on PATH may not.
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::string command = python + " " + quoted(script.string());
  for (const auto& a : args) command += " " + quoted(a);
  if (std::system(command.c_str()) != 0) {
    std::cerr << "warning: plots skipped: '" << command << "' failed (is python3-matplotlib installed?)\n";
    return false;
  }
  return true;
}

}  // namespace ffnshape::cli
