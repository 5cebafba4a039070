#include "fused_ops.h"

#include <ATen/Parallel.h>

#include "cpu_kernels.h"

namespace ffnshape::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

constexpr int64_t kGrainElements = 32768;  // below this, one thread does the work

// The loss as ATen's composite operators compute it: the path off the CPU and for dtypes other than fp32.
LossTerms composite_loss(const torch::Tensor& logits, const torch::Tensor& targets, int64_t ignore_index,
                         double z_weight) {
  LossTerms out;
  out.cross_entropy = torch::nn::functional::cross_entropy(
      logits, targets, torch::nn::functional::CrossEntropyFuncOptions().ignore_index(ignore_index));
  if (z_weight > 0) {
    const auto lse = torch::logsumexp(logits, -1).masked_select(targets.ne(ignore_index));
    out.z_loss = z_weight * lse.pow(2).mean();
  } else {
    out.z_loss = torch::zeros({}, logits.options());
  }
  return out;
}

// Forward: one pass over each row for its logsumexp (no log-probability matrix is written).
// Backward: one pass that writes the gradient, softmax(row) * w * (g_ce + 2 z g_z lse), then
// subtracts w * g_ce at each target; w is a row's weight in the means, 1 / counted or 0 if ignored.
struct CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
  static tensor_list forward(AutogradContext* ctx, const torch::Tensor& logits_in, const torch::Tensor& targets_in,
                             int64_t ignore_index, double z_weight) {
    const auto logits = logits_in.contiguous();
    const auto targets = targets_in.to(torch::kLong).contiguous();
    const int64_t rows = logits.size(0), cols = logits.size(1);
    auto lse = torch::empty({rows}, logits.options());
    const float* x = logits.data_ptr<float>();
    float* row_lse = lse.data_ptr<float>();
    at::parallel_for(0, rows, std::max<int64_t>(1, kGrainElements / cols),
                     [&](int64_t begin, int64_t end) { kernels::logsumexp_rows(x, cols, begin, end, row_lse); });
    const int64_t* t = targets.data_ptr<int64_t>();
    auto weight = torch::zeros({rows}, logits.options());
    float* w = weight.data_ptr<float>();
    double ce_sum = 0, z_sum = 0;
    int64_t counted = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (t[r] == ignore_index) continue;
      TORCH_CHECK(t[r] >= 0 && t[r] < cols, "target ", t[r], " is outside the vocabulary [0, ", cols, ")");
      ce_sum += static_cast<double>(row_lse[r]) - x[r * cols + t[r]];
      z_sum += static_cast<double>(row_lse[r]) * row_lse[r];
      w[r] = 1.0f;
      ++counted;
    }
    if (counted > 0) weight.div_(static_cast<double>(counted));
    ctx->save_for_backward({logits, lse, targets, weight});
    ctx->saved_data["z_weight"] = z_weight;
    const double n = static_cast<double>(counted);  // 0 counted rows give NaN, as the composite mean does
    return {torch::scalar_tensor(ce_sum / n, logits.options()),
            torch::scalar_tensor(z_weight > 0 ? z_weight * z_sum / n : 0.0, logits.options())};
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &logits = saved[0], &lse = saved[1], &targets = saved[2], &weight = saved[3];
    const double z_weight = ctx->saved_data["z_weight"].toDouble();
    const double g_ce = grads[0].item<double>(), g_z = grads[1].item<double>();
    const int64_t rows = logits.size(0), cols = logits.size(1);
    const int64_t* t = targets.data_ptr<int64_t>();
    const float* row_lse = lse.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    auto scale = torch::zeros({rows}, logits.options());
    float* s = scale.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
      if (w[r] > 0) s[r] = static_cast<float>(w[r] * (g_ce + 2.0 * z_weight * g_z * row_lse[r]));
    }
    auto grad = torch::empty_like(logits);
    const float* x = logits.data_ptr<float>();
    float* out = grad.data_ptr<float>();
    at::parallel_for(0, rows, std::max<int64_t>(1, kGrainElements / cols), [&](int64_t begin, int64_t end) {
      kernels::scaled_softmax_rows(x, row_lse, s, cols, begin, end, out);
    });
    for (int64_t r = 0; r < rows; ++r) {
      if (w[r] > 0) out[r * cols + t[r]] -= static_cast<float>(w[r] * g_ce);
    }
    return {grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

LossTerms cross_entropy_with_z_loss(const torch::Tensor& logits, const torch::Tensor& targets, int64_t ignore_index,
                                    double z_weight) {
  const bool fused = logits.device().is_cpu() && logits.scalar_type() == torch::kFloat && logits.dim() == 2 &&
                     targets.dim() == 1 && logits.size(1) > 0;
  if (!fused) return composite_loss(logits, targets, ignore_index, z_weight);
  const auto terms = CrossEntropyFunction::apply(logits, targets, ignore_index, z_weight);
  return {terms[0], terms[1]};
}

}  // namespace ffnshape::nn
