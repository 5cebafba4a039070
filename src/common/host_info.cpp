#include "host_info.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace ffnshape {
namespace {

// The first processor's model name and the bf16-relevant flags of /proc/cpuinfo.
std::pair<std::string, std::string> cpu_model_and_bf16() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model;
  std::set<std::string> flags;
  bool flags_read = false;
  while (std::getline(in, line) && (model.empty() || !flags_read)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto value = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    if (line.rfind("model name", 0) == 0 && model.empty()) model = value;
    if (line.rfind("flags", 0) == 0 && !flags_read) {
      std::istringstream words(value);
      for (std::string w; words >> w;) {
        if (w == "avx512_bf16" || w == "amx_bf16" || w == "avx2" || w == "avx512f") flags.insert(w);
      }
      flags_read = true;
    }
  }
  std::string bf16;
  for (const char* native : {"avx512_bf16", "amx_bf16"}) {
    if (flags.count(native)) bf16 += (bf16.empty() ? "" : " ") + std::string(native);
  }
  if (bf16.empty()) bf16 = flags.count("avx512f") ? "avx512 without bf16 (bf16 emulated)"
                         : flags.count("avx2")    ? "avx2 only (bf16 emulated)"
                                                  : "";
  return {model.empty() ? "unknown CPU" : model, bf16};
}

int nvidia_gpus() {
  std::error_code ec;
  int n = 0;
  for (std::filesystem::directory_iterator it("/proc/driver/nvidia/gpus", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}

}  // namespace

int64_t machine_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

std::string describe_host() {
  const auto [model, bf16] = cpu_model_and_bf16();
  std::string text = model + ", " + std::to_string(machine_cores()) + " cores";
  if (!bf16.empty()) text += ", " + bf16;
  if (const int gpus = nvidia_gpus()) text += ", " + std::to_string(gpus) + " NVIDIA GPU" + (gpus > 1 ? "s" : "");
  return text;
}

}  // namespace ffnshape
