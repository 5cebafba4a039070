#include "cloud_csv.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ffnshape/train/data_error.h"

namespace ffnshape::cli {
namespace {

constexpr const char* kFormat =
    "\n  fix: write one point per line as comma-separated numbers (e.g. 0.5,-1.25,3e-2); "
    "lines starting with '#' are comments";

std::string trimmed(const std::string& text, size_t begin, size_t end) {
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

}  // namespace

CsvCloud read_cloud_csv(const std::string& path, int64_t min_points) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw DataError("cannot read point cloud '" + path + "': it is a directory, not a CSV file");
  }
  std::ifstream in(path);
  if (!in) throw DataError("cannot read point cloud '" + path + "': " + std::strerror(errno));

  CsvCloud cloud;
  cloud.path = path;
  std::vector<double> values;
  int64_t columns = 0;
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    const std::string row = trimmed(text, 0, text.size());  // also drops a Windows '\r'
    if (row.empty() || row[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line) + ": ";
    int64_t column = 0;
    for (size_t begin = 0; begin <= row.size(); ++column) {
      size_t end = row.find(',', begin);
      if (end == std::string::npos) end = row.size();
      const std::string field = trimmed(row, begin, end);
      const std::string at = where + "column " + std::to_string(column + 1) + ": ";
      if (field.empty()) throw DataError(at + "empty field" + kFormat);
      char* stop = nullptr;
      const double value = std::strtod(field.c_str(), &stop);
      if (stop != field.c_str() + field.size()) throw DataError(at + "'" + field + "' is not a number" + kFormat);
      if (!std::isfinite(value)) {
        throw DataError(at + "'" + field + "' is not a finite number (NaN or infinite coordinates have no distance)");
      }
      values.push_back(value);
      begin = end + 1;
    }
    if (cloud.line.empty()) {
      columns = column;
    } else if (column != columns) {
      throw DataError(where + std::to_string(column) + " values, but the first point (line " +
                      std::to_string(cloud.line.front()) + ") has " + std::to_string(columns) +
                      "\n  fix: every point needs the same number of coordinates");
    }
    cloud.line.push_back(line);
  }
  if (in.bad()) throw DataError("cannot read point cloud '" + path + "': " + std::strerror(errno));

  const auto n = static_cast<int64_t>(cloud.line.size());
  if (n < min_points) {
    throw DataError("point cloud '" + path + "' has " + std::to_string(n) + (n == 1 ? " point" : " points") +
                    "; at least " + std::to_string(min_points) + " are needed" + kFormat);
  }
  cloud.points = torch::from_blob(values.data(), {n, columns}, torch::kDouble).clone();
  return cloud;
}

}  // namespace ffnshape::cli
