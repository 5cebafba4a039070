// Point clouds from CSV files, for the geometry commands: one point per line, its coordinates as
// comma-separated numbers. Blank lines and lines starting with '#' are skipped; every point needs the
// same number of coordinates.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

namespace ffnshape::cli {

struct CsvCloud {
  std::string path;
  torch::Tensor points;       // (N, D) float64
  std::vector<int64_t> line;  // the file line (1-based) of each point, for messages

  int64_t size() const { return points.size(0); }
  int64_t dimensions() const { return points.size(1); }
};

// Throws ffnshape::DataError naming the file (and the line and column where there is one) for a file that
// cannot be read, a field that is empty, not a number or not finite, rows of different lengths, and fewer
// than min_points points.
CsvCloud read_cloud_csv(const std::string& path, int64_t min_points = 3);

}  // namespace ffnshape::cli
