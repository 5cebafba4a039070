#include "ffnshape/train/device.h"

#include <sys/resource.h>

#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include <algorithm>
#include <array>

#include "ffnshape/config/config_error.h"

// Set by CMake for this file alone when the LibTorch it builds against carries CUDA.
#ifdef FFNSHAPE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#ifndef FFNSHAPE_VERSION
#define FFNSHAPE_VERSION "unknown"
#endif

namespace ffnshape {

torch::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (!torch::cuda::is_available()) {
    throw ConfigError("train.device", "is '" + name + "' but this build or machine has no CUDA device",
                      "use device: auto or cpu (`ffnshape version` lists what the build and machine offer)");
  }
  const torch::Device device(name);
  if (device.has_index() && device.index() >= static_cast<int>(torch::cuda::device_count())) {
    throw ConfigError("train.device", "is '" + name + "' but only " + std::to_string(torch::cuda::device_count()) +
                                          " CUDA device(s) are visible",
                      "use cuda:0 .. cuda:" + std::to_string(torch::cuda::device_count() - 1) + ", or check CUDA_VISIBLE_DEVICES");
  }
  return device;
}

BuildInfo build_info() {
  BuildInfo info;
  info.ffnshape = FFNSHAPE_VERSION;
  info.libtorch = TORCH_VERSION;
  const auto& hooks = at::detail::getCUDAHooks();
  info.cuda_compiled = hooks.hasCUDART();
  if (info.cuda_compiled) {
    const long version = hooks.versionCUDART();  // e.g. 13020 for 13.2
    info.cuda_version = std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
  }
#ifdef FFNSHAPE_WITH_CUDA
  const int count = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < count; ++i) {
    const auto* props = at::cuda::getDeviceProperties(i);
    info.cuda_devices.push_back({i, props->name, static_cast<int64_t>(props->totalGlobalMem), props->major, props->minor});
  }
#endif
  // The backends ffnshape's ProcessGroup can join with (CMake found their headers).
#ifdef FFNSHAPE_WITH_GLOO
  info.distributed.push_back("gloo");
#endif
#ifdef FFNSHAPE_WITH_NCCL
  info.distributed.push_back("nccl");
#endif
  return info;
}

std::string device_name(torch::Device device) {
#ifdef FFNSHAPE_WITH_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.has_index() ? device.index() : 0)->name;
#endif
  return device.str();
}

void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

void reset_peak_memory(torch::Device device) {
#ifdef FFNSHAPE_WITH_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.has_index() ? device.index() : 0);
#endif
}

int64_t peak_memory_bytes(torch::Device device) {
#ifdef FFNSHAPE_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.has_index() ? device.index() : 0);
    return stats.allocated_bytes[0].peak;  // [0]: the aggregate over all pools
  }
#endif
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

std::optional<double> published_peak_flops(const std::string& name, Precision precision, bool tf32) {
  // Dense (no sparsity) tensor-core peaks from NVIDIA's data sheets, in TFLOP/s: bf16, TF32, plain fp32.
  // The more specific names come first (an "H100 PCIe" is also an "H100").
  struct Peak {
    const char* name_part;
    double bf16, tf32, fp32;
  };
  static const std::array<Peak, 7> kPeaks = {{
      {"H100 PCIe", 756.0, 378.0, 51.2},
      {"H100 NVL", 835.5, 417.5, 60.0},
      {"H100", 989.4, 494.7, 66.9},   // SXM
      {"H200 NVL", 835.5, 417.5, 60.0},
      {"H200", 989.4, 494.7, 66.9},   // SXM
      {"A100", 312.0, 156.0, 19.5},
      {"B200", 2250.0, 1100.0, 75.0},
  }};
  for (const auto& peak : kPeaks) {
    if (name.find(peak.name_part) == std::string::npos) continue;
    const double tflops = precision == Precision::bf16 ? peak.bf16 : tf32 ? peak.tf32 : peak.fp32;
    return tflops * 1e12;
  }
  return std::nullopt;
}

}  // namespace ffnshape
