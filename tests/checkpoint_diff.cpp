// Compares the newest checkpoints of two runs of the same model: prints the largest absolute
// difference of any weight and of any AdamW moment, for the data-parallel tests.
//   checkpoint_diff RUN_A RUN_B  ->  "weights 1.2e-07 moments 3.4e-09"
#include <iostream>

#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/optimizer.h"

namespace {

double max_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: checkpoint_diff RUN_A RUN_B\n";
    return 2;
  }
  try {
    auto a = ffnshape::load_trained_model(argv[1]);
    auto b = ffnshape::load_trained_model(argv[2]);
    const auto device = torch::Device(torch::kCPU);
    auto opt_a = ffnshape::make_optimizer(a.model, a.config.optimizer, device);
    auto opt_b = ffnshape::make_optimizer(b.model, b.config.optimizer, device);
    ffnshape::load_checkpoint(a.checkpoint, a.model, opt_a.get(), device);
    ffnshape::load_checkpoint(b.checkpoint, b.model, opt_b.get(), device);
    const auto pa = a.model->parameters(), pb = b.model->parameters();
    double weights = 0, moments = 0;
    for (size_t i = 0; i < pa.size(); ++i) {
      weights = std::max(weights, max_difference(pa[i], pb[i]));
      const auto& sa = static_cast<torch::optim::AdamWParamState&>(*opt_a->state().at(pa[i].unsafeGetTensorImpl()));
      const auto& sb = static_cast<torch::optim::AdamWParamState&>(*opt_b->state().at(pb[i].unsafeGetTensorImpl()));
      moments = std::max({moments, max_difference(sa.exp_avg(), sb.exp_avg()), max_difference(sa.exp_avg_sq(), sb.exp_avg_sq())});
      if (sa.step() != sb.step()) throw std::runtime_error("the optimizer step counts differ");
    }
    std::cout << "weights " << weights << " moments " << moments << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "checkpoint_diff: " << e.what() << "\n";
    return 1;
  }
}
