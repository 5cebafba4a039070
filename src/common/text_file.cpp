#include "text_file.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ffnshape {

void write_text_file(const std::string& path, const std::string& text) {
  const auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write '" + tmp + "': check that the folder exists and is writable");
    out << text;
    if (!out) throw std::runtime_error("writing '" + tmp + "' failed (is the disk full?)");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace ffnshape
