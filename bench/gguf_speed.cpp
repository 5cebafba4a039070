// bench_gguf_speed: time reading a GGUF file with ffnshape::interop::GgufFile -- open (map, parse and
// check the header, metadata and tensor infos) and dequantize every tensor to a dtype. Prints one JSON
// object with the median seconds of each phase over the repeats.
//
//   bench_gguf_speed FILE.gguf [--dtype fp32|bf16] [--repeats 3] [--threads N]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "ffnshape/interop/gguf.h"

namespace {

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "error: " << problem << "\n"
            << "usage: bench_gguf_speed FILE.gguf [--dtype fp32|bf16] [--repeats 3] [--threads N]\n";
  std::exit(2);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, dtype_name = "fp32";
  int repeats = 3, threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      path = arg;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--dtype") dtype_name = value;
    else if (arg == "--repeats") repeats = std::max(1, std::stoi(value));
    else if (arg == "--threads") threads = std::stoi(value);
    else usage("unknown option " + arg);
  }
  if (path.empty()) usage("no GGUF file given");
  if (dtype_name != "fp32" && dtype_name != "bf16") usage("--dtype must be fp32 or bf16");
  const auto dtype = dtype_name == "bf16" ? torch::kBFloat16 : torch::kFloat;
  if (threads > 0) torch::set_num_threads(threads);

  std::vector<double> open_s, dequantize_s;
  int64_t tensors = 0, elements = 0;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    ffnshape::interop::GgufFile file(path);
    open_s.push_back(since(start));
    start = std::chrono::steady_clock::now();
    tensors = elements = 0;
    for (const auto& name : file.tensor_names()) {
      elements += file.tensor(name, dtype).numel();  // each result freed at once, as an importer would
      ++tensors;
    }
    dequantize_s.push_back(since(start));
  }
  std::printf("{\"tensors\": %lld, \"elements\": %lld, \"dtype\": \"%s\", \"threads\": %d, \"open_s\": %.4f, "
              "\"dequantize_s\": %.4f, \"total_s\": %.4f}\n",
              static_cast<long long>(tensors), static_cast<long long>(elements), dtype_name.c_str(),
              torch::get_num_threads(), median(open_s), median(dequantize_s), median(open_s) + median(dequantize_s));
  return 0;
}
