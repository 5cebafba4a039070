// bench_gw_speed: time ffnshape::geometry::gromov_wasserstein on two distance matrices stored as raw
// little-endian float64 (N x N, row-major; N from the file size), the files bench/gw_speed.sh writes for
// both sides. Prints one JSON object: value and median seconds per solver.
//
//   bench_gw_speed --dx DX.f64 --dy DY.f64 [--repeats 3] [--epsilon 5e-3] [--solvers cg,entropic]
//                  [--threads N]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ffnshape/geometry/gromov.h"

namespace {

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "error: " << problem << "\n"
            << "usage: bench_gw_speed --dx DX.f64 --dy DY.f64 [--repeats 3] [--epsilon 5e-3]\n"
            << "                      [--solvers cg,entropic] [--threads N]\n";
  std::exit(2);
}

torch::Tensor read_matrix(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) usage("cannot read " + path);
  const auto bytes = static_cast<int64_t>(in.tellg());
  const auto n = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(bytes / 8))));
  if (n * n * 8 != bytes) usage(path + " is not a square float64 matrix (" + std::to_string(bytes) + " bytes)");
  auto t = torch::empty({n, n}, torch::kDouble);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(t.data_ptr<double>()), bytes);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dx_path, dy_path, solvers = "cg,entropic";
  int repeats = 3, threads = 0;
  double epsilon = 5e-3;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("missing value after " + flag);
    const std::string value = argv[++i];
    if (flag == "--dx") dx_path = value;
    else if (flag == "--dy") dy_path = value;
    else if (flag == "--repeats") repeats = std::stoi(value);
    else if (flag == "--epsilon") epsilon = std::stod(value);
    else if (flag == "--solvers") solvers = value;
    else if (flag == "--threads") threads = std::stoi(value);
    else usage("unknown option " + flag);
  }
  if (dx_path.empty() || dy_path.empty()) usage("--dx and --dy are required");
  if (threads > 0) torch::set_num_threads(threads);
  const auto dx = read_matrix(dx_path), dy = read_matrix(dy_path);

  std::ostringstream json;
  json.precision(17);
  json << "{\"n\": " << dx.size(0) << ", \"m\": " << dy.size(0) << ", \"threads\": " << torch::get_num_threads();
  std::stringstream list(solvers);
  for (std::string name; std::getline(list, name, ',');) {
    ffnshape::geometry::GwOptions options;
    options.solver = ffnshape::geometry::parse_gw_solver(name);
    options.epsilon = epsilon;
    std::vector<double> seconds;
    double value = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      value = ffnshape::geometry::gromov_wasserstein(dx, dy, options);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    json << ", \"" << name << "\": {\"value\": " << value << ", \"seconds\": " << seconds[seconds.size() / 2] << "}";
  }
  std::cout << json.str() << "}\n";
  return 0;
}
