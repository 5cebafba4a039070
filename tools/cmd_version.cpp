// ffnshape version [--json]: ffnshape, the LibTorch it was built against, CUDA, devices, c10d backends.
#include <nlohmann/json.hpp>

#include <iostream>

#include "commands.h"
#include "ffnshape/train/device.h"

namespace ffnshape::cli {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text.empty() ? "none" : text;
}

int run_version(bool json) {
  const auto info = build_info();
  if (json) {
    auto devices = nlohmann::json::array();
    for (const auto& d : info.cuda_devices) {
      devices.push_back({{"index", d.index},
                         {"name", d.name},
                         {"memory_bytes", d.memory_bytes},
                         {"compute_capability", std::to_string(d.major) + "." + std::to_string(d.minor)}});
    }
    std::cout << nlohmann::json{{"ffnshape", info.ffnshape},
                                {"libtorch", info.libtorch},
                                {"cuda_compiled", info.cuda_compiled},
                                {"cuda_version", info.cuda_compiled ? nlohmann::json(info.cuda_version) : nlohmann::json()},
                                {"cuda_devices", devices},
                                {"distributed", info.distributed}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << version_line() << "\n";
  std::cout << "CUDA: " << (info.cuda_compiled ? "compiled in, runtime " + info.cuda_version : "not compiled in") << "\n";
  std::cout << "CUDA devices: " << (info.cuda_devices.empty() ? "none visible" : "") << "\n";
  for (const auto& d : info.cuda_devices) {
    std::cout << "  cuda:" << d.index << "  " << d.name << ", " << d.memory_bytes / (1 << 20) << " MiB, compute capability "
              << d.major << "." << d.minor << "\n";
  }
  std::cout << "distributed backends: " << joined(info.distributed) << "\n";
  return kExitOk;
}

}  // namespace

std::string version_line() {
  const auto info = build_info();
  return "ffnshape " + info.ffnshape + " (LibTorch " + info.libtorch +
         (info.cuda_compiled ? ", CUDA " + info.cuda_version : ", CPU only") + ")";
}

Subcommand add_version_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("version", "ffnshape, LibTorch and CUDA versions, visible GPUs, distributed backends");
  sub->add_flag("--json", *json, "Print JSON (fields ffnshape, libtorch, cuda_compiled, cuda_version, cuda_devices, distributed)");
  return {sub, [json] { return run_version(*json); }};
}

}  // namespace ffnshape::cli
