// The device a run trains on, CPU or one CUDA GPU: what the trainer needs of it beyond tensors
// (names, memory peaks, published peak throughput) and what `ffnshape version` reports.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "ffnshape/config/train_config.h"

namespace ffnshape {

// Resolves train.device ("auto" picks CUDA when available) and checks it exists.
torch::Device resolve_device(const std::string& name);

struct CudaDeviceInfo {
  int index = 0;
  std::string name;        // e.g. "NVIDIA H200"
  int64_t memory_bytes = 0;
  int major = 0, minor = 0;  // compute capability
};

// What the linked LibTorch and this machine offer.
struct BuildInfo {
  std::string ffnshape;                  // ffnshape's version
  std::string libtorch;                  // LibTorch's version, e.g. "2.15.0"
  bool cuda_compiled = false;            // the linked LibTorch carries CUDA
  std::string cuda_version;              // its CUDA runtime, e.g. "13.2"; empty without CUDA
  std::vector<CudaDeviceInfo> cuda_devices;  // visible now (none on a machine without a GPU)
  std::vector<std::string> distributed;  // c10d backends compiled in: gloo, nccl
};
BuildInfo build_info();

// "cpu", or the GPU's name.
std::string device_name(torch::Device device);

// Waits for the device's queued work (no-op on the CPU).
void synchronize(torch::Device device);

// Peak memory since the last reset: the CUDA caching allocator's peak of allocated bytes on a GPU;
// the process's peak resident set on the CPU (which cannot be reset, so it covers the process).
void reset_peak_memory(torch::Device device);
int64_t peak_memory_bytes(torch::Device device);

// The published dense peak FLOP/s of a known data-centre GPU (A100, H100, H200, B200) for the
// training precision: bf16 tensor cores, TF32 tensor cores for fp32 with TF32 allowed, else plain
// fp32. Nothing for other devices (the CPU included).
std::optional<double> published_peak_flops(const std::string& device_name, Precision precision, bool tf32);

}  // namespace ffnshape
