// A fresh directory for one test, removed (with everything in it) when the test ends.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

namespace ffnshape::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "ffnshape_test") {
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(entropy()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
  static inline int counter_ = 0;
};

}  // namespace ffnshape::testing
