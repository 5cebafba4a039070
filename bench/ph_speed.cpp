// In-process timing of rips_h1 on a distance matrix read from a lower-triangular text file (the format
// `ripser --format lower-distance` reads: row i holds d(i, 0..i-1), comma or space separated), so both
// sides of bench/ph_speed.sh see the same matrix. Reading the file is not timed; the whole rips_h1 call
// (validation, copy, degree 0, degree 1) is.
//
//   bench_ph_speed MATRIX.txt [--repeats R] [--diagram OUT.txt] [--hera]
//
// Prints one JSON line: points, repeats, median and minimum seconds, number of pairs. --diagram writes
// the diagram, one "birth death" line per pair (%.17g; "inf" for an essential class). --hera also times
// diagram_distance (q = 2) between this diagram and that of the matrix with 5% symmetric noise added.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ffnshape/geometry/persistence.h"

namespace {

torch::Tensor read_lower_distance(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<double> values;
  std::string token;
  char c;
  while (in.get(c)) {
    if (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      if (!token.empty()) values.push_back(std::stod(token)), token.clear();
    } else {
      token += c;
    }
  }
  if (!token.empty()) values.push_back(std::stod(token));
  int64_t n = 1;
  while (n * (n - 1) / 2 < static_cast<int64_t>(values.size())) ++n;
  if (n * (n - 1) / 2 != static_cast<int64_t>(values.size())) {
    throw std::runtime_error(path + ": " + std::to_string(values.size()) + " values is not a lower triangle");
  }
  auto d = torch::zeros({n, n}, torch::kDouble);
  auto a = d.accessor<double, 2>();
  size_t k = 0;
  for (int64_t i = 1; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) a[i][j] = a[j][i] = values[k++];
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  using ffnshape::geometry::rips_h1;
  if (argc < 2) {
    std::cerr << "usage: bench_ph_speed MATRIX.txt [--repeats R] [--diagram OUT.txt] [--hera]\n";
    return 2;
  }
  std::string matrix_path = argv[1], diagram_path;
  int repeats = 5;
  bool hera = false;
  for (int k = 2; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--repeats" && k + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++k]));
    } else if (arg == "--hera") {
      hera = true;
    } else if (arg == "--diagram" && k + 1 < argc) {
      diagram_path = argv[++k];
    } else {
      std::cerr << "error: unknown argument " << arg << "\n";
      return 2;
    }
  }
  try {
    const auto distances = read_lower_distance(matrix_path);
    std::vector<double> seconds;
    ffnshape::geometry::PersistenceDiagram diagram;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      diagram = rips_h1(distances);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::vector<double> sorted = seconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                            : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
    if (!diagram_path.empty()) {
      FILE* out = std::fopen(diagram_path.c_str(), "w");
      if (!out) throw std::runtime_error("cannot write " + diagram_path);
      for (const auto& p : diagram) std::fprintf(out, "%.17g %.17g\n", p.birth, p.death);
      std::fclose(out);
    }
    std::string hera_fields;
    if (hera) {
      torch::manual_seed(0);
      const auto noise = torch::rand_like(distances).triu(1);
      const auto other = rips_h1(distances * (1.0 + 0.05 * (noise + noise.t())));
      const auto start = std::chrono::steady_clock::now();
      const double w2 = ffnshape::geometry::diagram_distance(diagram, other, 2.0);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      hera_fields = ", \"hera_w2\": " + std::to_string(w2) + ", \"hera_s\": " + std::to_string(s) +
                    ", \"hera_pairs\": [" + std::to_string(diagram.size()) + ", " + std::to_string(other.size()) + "]";
    }
    std::printf("{\"points\": %lld, \"repeats\": %d, \"median_s\": %.6f, \"min_s\": %.6f, \"pairs\": %zu%s}\n",
                static_cast<long long>(distances.size(0)), repeats, median, sorted.front(), diagram.size(),
                hera_fields.c_str());
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
