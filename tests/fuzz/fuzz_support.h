// What every libFuzzer target of tests/fuzz shares: the input as a file (ffnshape's readers take
// paths, as users give them), and the rule each target checks besides the sanitizers: bad input ends
// in ffnshape's own error types (DataError, ConfigError), whose messages say what is wrong. Any other
// exception escapes to libFuzzer, which reports it as a crash and keeps the input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ffnshape/config/config_error.h"
#include "ffnshape/train/data_error.h"

namespace fuzz {

// A folder of this process under TMPDIR (else /tmp), made once and removed at exit. Never freed, so
// the exit handler can still read it.
inline const std::string& scratch_dir() {
  static const std::string* const dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* path = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/ffnshape_fuzz_" + std::to_string(getpid()));
    std::filesystem::create_directories(*path);
    std::atexit([] { std::error_code ignored; std::filesystem::remove_all(scratch_dir(), ignored); });
    return path;
  }();
  return *dir;
}

// Writes `size` bytes to NAME inside scratch_dir() and returns its path.
inline std::string write_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out.flush()) std::abort();
  return path;
}

// Runs `read`. ffnshape's errors are the expected answer to bad input, and must say something.
template <class Read>
void expect_clean_errors(Read&& read) {
  try {
    read();
  } catch (const ffnshape::DataError& e) {
    if (std::string(e.what()).empty()) std::abort();
  } catch (const ffnshape::ConfigError& e) {
    if (std::string(e.what()).empty()) std::abort();
  }
}

}  // namespace fuzz
