// One rank of tests/process_group_test.sh: joins the job its environment describes (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), then all-reduces rank + 1 and receives rank 0's tensor, and prints both.
// With a second argument "leave", rank 1 exits right after joining, as a rank that dies would; with
// "grads", each rank builds a differently seeded layer, takes rank 0's weights, sets gradients of
// (rank + 1) * (1, 2, 3, ...) and averages them in buckets of 32 bytes; with "bandwidth [MB]", the
// ranks all-reduce a buffer of MB megabytes (on this rank's GPU when CUDA is available, so over NCCL)
// and rank 0 prints the time and the bus bandwidth, 2 (n - 1) / n x bytes / time, as nccl-tests do.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ffnshape/train/data_parallel.h"
#include "ffnshape/train/process_group.h"

namespace {

int measure_bandwidth(const ffnshape::DistributedEnv& env, std::chrono::milliseconds timeout, int64_t megabytes) {
  const bool cuda = torch::cuda::is_available();
  const auto device = cuda ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank)) : torch::Device(torch::kCPU);
  ffnshape::ProcessGroup group(env, timeout, device);
  const int64_t elements = megabytes * 1000000 / 4;
  std::vector<torch::Tensor> buffer{torch::ones({elements}, torch::TensorOptions().device(device))};
  group.all_reduce_sum(buffer);  // also the warm-up
  const double first = buffer[0][0].item<double>();
  if (first != group.world_size()) {
    std::cerr << "all-reduce of ones gave " << first << ", not " << group.world_size() << "\n";
    return 1;
  }
  const int iterations = 10;
  auto sync = [&] {
    if (cuda) torch::cuda::synchronize(device.index());
  };
  sync();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) group.all_reduce_sum(buffer);
  sync();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
  const double bytes = static_cast<double>(elements) * 4, n = group.world_size();
  if (group.rank() == 0) {
    std::cout << "all-reduce of " << megabytes << " MB over " << group.world_size() << " ranks (" << (cuda ? "NCCL" : "Gloo")
              << "): " << seconds * 1e3 << " ms, bus bandwidth " << 2 * (n - 1) / n * bytes / seconds / 1e9 << " GB/s"
              << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto timeout = std::chrono::milliseconds(argc > 1 ? std::atoi(argv[1]) : 30000);
  try {
    const auto env = ffnshape::read_distributed_env();
    const std::string mode = argc > 2 ? argv[2] : "";
    if (mode == "bandwidth") return measure_bandwidth(env, timeout, argc > 3 ? std::atoll(argv[3]) : 64);
    ffnshape::ProcessGroup group(env, timeout);
    if (mode == "leave" && group.rank() == 1) std::_Exit(0);
    if (mode == "grads") {
      torch::manual_seed(group.rank());
      torch::nn::Linear layer(5, 3);
      std::cout.precision(17);
      if (group.rank() == 0) std::cout << "rank 0 initial weights " << layer->weight.sum().item<double>() << "\n";
      ffnshape::broadcast_parameters(*layer, group);
      for (auto& p : layer->parameters()) {
        p.mutable_grad() = torch::arange(1.0, p.numel() + 1.0).view_as(p).mul(group.rank() + 1.0);
      }
      ffnshape::all_reduce_gradients(*layer, group, 1.0 / group.world_size(), /*bucket_bytes=*/32);
      std::cout << "rank " << group.rank() << " weights " << layer->weight.sum().item<double>() << " grads "
                << layer->weight.grad().sum().item<double>() << " " << layer->bias.grad().sum().item<double>()
                << std::endl;
      return 0;
    }
    std::vector<torch::Tensor> sum{torch::full({3}, group.rank() + 1.0)};
    group.all_reduce_sum(sum);
    std::vector<torch::Tensor> from_root{group.rank() == 0 ? torch::arange(4.0) : torch::zeros({4})};
    group.broadcast(from_root, 0);
    group.barrier();
    std::cout << "rank " << group.rank() << " of " << group.world_size() << ": sum " << sum[0][0].item<double>()
              << ", broadcast " << from_root[0].sum().item<double>() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
