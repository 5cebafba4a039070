// Test helper for the import / export tests: a run's logits on given token ids, and the largest weight
// difference between the models of two runs.
//   model_probe logits RUN 1,5,9,...   ->  {"logits": [[...], ...]}  (fp32, one row per position)
//   model_probe diff RUN_A RUN_B       ->  "tensors N max_abs_diff X" (exit 1 when names or shapes differ)
#include <cstdio>
#include <iostream>
#include <sstream>

#include "ffnshape/train/checkpoint.h"

namespace {

int print_logits(const std::string& run, const std::string& csv) {
  auto trained = ffnshape::load_trained_model(run);
  trained.model->to(torch::kCPU, torch::kFloat);
  trained.model->eval();
  std::vector<int64_t> ids;
  std::stringstream in(csv);
  for (std::string item; std::getline(in, item, ',');) ids.push_back(std::stoll(item));
  torch::NoGradGuard no_grad;
  const auto logits = trained.model->forward(torch::tensor(ids, torch::kLong).unsqueeze(0))[0].contiguous();
  const auto* p = logits.data_ptr<float>();
  std::printf("{\"logits\": [");
  for (int64_t t = 0; t < logits.size(0); ++t) {
    std::printf("%s[", t ? ", " : "");
    for (int64_t v = 0; v < logits.size(1); ++v) std::printf("%s%.9g", v ? ", " : "", p[t * logits.size(1) + v]);
    std::printf("]");
  }
  std::printf("]}\n");
  return 0;
}

int print_diff(const std::string& run_a, const std::string& run_b) {
  const auto a = ffnshape::load_trained_model(run_a).model->named_parameters();
  const auto b = ffnshape::load_trained_model(run_b).model->named_parameters();
  if (a.keys() != b.keys()) {
    std::cerr << "model_probe: the two models have different parameter names\n";
    return 1;
  }
  double worst = 0;
  for (const auto& item : a) {
    const auto& other = b[item.key()];
    if (item.value().sizes() != other.sizes()) {
      std::cerr << "model_probe: " << item.key() << " differs in shape\n";
      return 1;
    }
    worst = std::max(worst, (item.value().to(torch::kDouble) - other.to(torch::kDouble)).abs().max().item<double>());
  }
  std::cout << "tensors " << a.size() << " max_abs_diff " << worst << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc != 4 || (mode != "logits" && mode != "diff")) {
    std::cerr << "usage: model_probe logits RUN IDS | model_probe diff RUN_A RUN_B\n";
    return 2;
  }
  try {
    return mode == "logits" ? print_logits(argv[2], argv[3]) : print_diff(argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::cerr << "model_probe: " << e.what() << "\n";
    return 1;
  }
}
