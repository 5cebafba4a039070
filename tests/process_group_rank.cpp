// One rank of tests/process_group_test.sh: joins the job its environment describes (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), then all-reduces rank + 1 and receives rank 0's tensor, and prints both.
// With a second argument "leave", rank 1 exits right after joining, as a rank that dies would; with
// "grads", each rank builds a differently seeded layer, takes rank 0's weights, sets gradients of
// (rank + 1) * (1, 2, 3, ...) and averages them in buckets of 32 bytes.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ffnshape/train/data_parallel.h"
#include "ffnshape/train/process_group.h"

int main(int argc, char** argv) {
  const auto timeout = std::chrono::milliseconds(argc > 1 ? std::atoi(argv[1]) : 30000);
  try {
    const auto env = ffnshape::read_distributed_env();
    ffnshape::ProcessGroup group(env, timeout);
    const std::string mode = argc > 2 ? argv[2] : "";
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
