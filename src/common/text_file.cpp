#include "text_file.h"

#include <fstream>
#include <stdexcept>
#include <system_error>

#include "ffnshape/train/data_error.h"

namespace fs = std::filesystem;

namespace ffnshape {

void write_text_file(const std::string& path, const std::string& text) {
  const auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write '" + tmp + "': check that the folder exists and is writable");
    out << text;
    if (!out) throw std::runtime_error("writing '" + tmp + "' failed (is the disk full?)");
  }
  fs::rename(tmp, path);
}

void check_new_output_dir(const fs::path& dir) {
  if (fs::exists(dir) && !(fs::is_directory(dir) && fs::is_empty(dir))) {
    throw DataError("'" + dir.string() + "' already exists and is not empty; nothing was written\n"
                    "  fix: give a new --out folder, or remove this one");
  }
}

StagedFolder::StagedFolder(const fs::path& final_dir)
    : final_(final_dir), staging_(final_dir.string() + ".partial") {
  check_new_output_dir(final_);
  fs::remove_all(staging_);
  std::error_code ec;
  fs::create_directories(staging_, ec);
  if (ec) {
    throw std::runtime_error("cannot create '" + staging_.string() + "': " + ec.message() +
                             "\n  fix: check that the parent folder is writable");
  }
}

StagedFolder::~StagedFolder() {
  if (committed_) return;
  std::error_code ignored;  // a destructor must not throw; the worst case is a .partial left over
  fs::remove_all(staging_, ignored);
}

void StagedFolder::commit() {
  std::error_code ec;
  fs::rename(staging_, final_, ec);  // POSIX rename replaces an empty folder
  if (ec) {
    throw std::runtime_error("cannot rename '" + staging_.string() + "' to '" + final_.string() + "': " + ec.message());
  }
  committed_ = true;
}

}  // namespace ffnshape
