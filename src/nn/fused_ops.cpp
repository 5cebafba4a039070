#include "fused_ops.h"

#include <ATen/Parallel.h>

#include "cpu_kernels.h"

namespace ffnshape::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

constexpr int64_t kGrainElements = 32768;  // below this, one thread does the work

// The loss as ATen's composite operators compute it, in fp32: the path off the CPU and for dtypes
// the fused node does not take.
LossTerms composite_loss(const torch::Tensor& logits_in, const torch::Tensor& targets, int64_t ignore_index,
                         double z_weight) {
  const auto logits = logits_in.to(torch::kFloat);
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
// fp32 or bf16 logits (autocast's head output); the sums and the losses are fp32 either way, and a
// bf16 gradient is computed in fp32 and rounded once.
struct CrossEntropyFunction : public torch::autograd::Function<CrossEntropyFunction> {
  static tensor_list forward(AutogradContext* ctx, const torch::Tensor& logits_in, const torch::Tensor& targets_in,
                             int64_t ignore_index, double z_weight) {
    const auto logits = logits_in.contiguous();
    const auto targets = targets_in.to(torch::kLong).contiguous();
    const auto fp32 = logits.options().dtype(torch::kFloat);
    const int64_t rows = logits.size(0), cols = logits.size(1);
    const bool bf16 = logits.scalar_type() == torch::kBFloat16;
    auto lse = torch::empty({rows}, fp32);
    float* row_lse = lse.data_ptr<float>();
    at::parallel_for(0, rows, std::max<int64_t>(1, kGrainElements / cols), [&](int64_t begin, int64_t end) {
      if (bf16) kernels::logsumexp_rows_bf16(bf16_bits(logits), cols, begin, end, row_lse);
      else kernels::logsumexp_rows(logits.data_ptr<float>(), cols, begin, end, row_lse);
    });
    const float* fp32_logits = bf16 ? nullptr : logits.data_ptr<float>();
    const at::BFloat16* bf16_logits = bf16 ? logits.data_ptr<at::BFloat16>() : nullptr;
    const auto logit = [&](int64_t index) {
      return bf16 ? static_cast<float>(bf16_logits[index]) : fp32_logits[index];
    };
    const int64_t* t = targets.data_ptr<int64_t>();
    auto weight = torch::zeros({rows}, fp32);
    float* w = weight.data_ptr<float>();
    double ce_sum = 0, z_sum = 0;
    int64_t counted = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (t[r] == ignore_index) continue;
      TORCH_CHECK(t[r] >= 0 && t[r] < cols, "target ", t[r], " is outside the vocabulary [0, ", cols, ")");
      ce_sum += static_cast<double>(row_lse[r]) - logit(r * cols + t[r]);
      z_sum += static_cast<double>(row_lse[r]) * row_lse[r];
      w[r] = 1.0f;
      ++counted;
    }
    if (counted > 0) weight.div_(static_cast<double>(counted));
    ctx->save_for_backward({logits, lse, targets, weight});
    ctx->saved_data["z_weight"] = z_weight;
    const double n = static_cast<double>(counted);  // 0 counted rows give NaN, as the composite mean does
    return {torch::scalar_tensor(ce_sum / n, fp32), torch::scalar_tensor(z_weight > 0 ? z_weight * z_sum / n : 0.0, fp32)};
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
    auto scale = torch::zeros({rows}, lse.options()), target_shift = torch::zeros({rows}, lse.options());
    float *s = scale.data_ptr<float>(), *shift = target_shift.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
      if (w[r] == 0) continue;
      s[r] = static_cast<float>(w[r] * (g_ce + 2.0 * z_weight * g_z * row_lse[r]));
      shift[r] = static_cast<float>(w[r] * g_ce);
    }
    auto grad = torch::empty_like(logits);
    const int64_t grain = std::max<int64_t>(1, kGrainElements / cols);
    if (logits.scalar_type() == torch::kBFloat16) {
      at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
        kernels::loss_gradient_rows_bf16(bf16_bits(logits), row_lse, s, t, shift, cols, begin, end, bf16_bits(grad));
      });
      return {grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
    float* out = grad.data_ptr<float>();
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      kernels::scaled_softmax_rows(logits.data_ptr<float>(), row_lse, s, cols, begin, end, out);
    });
    for (int64_t r = 0; r < rows; ++r) {
      if (w[r] > 0) out[r * cols + t[r]] -= shift[r];
    }
    return {grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// Whether the fused nodes take tensors of this dtype: fp32, and bf16 (autocast's dtype on the CPU),
// which the kernels compute in fp32 and round once.
bool fused_dtype(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kBFloat16;
}

// The rotation over every (batch, head) of a 4-D fp32 or bf16 tensor whose rows (last dimension) are
// contiguous; y has x's dtype.
void rotate_heads(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, float sign,
                  torch::Tensor& y) {
  const int64_t heads = x.size(1), seq = x.size(2), half = x.size(3) / 2;
  const float *c = cos.data_ptr<float>(), *s = sin.data_ptr<float>();
  const bool bf16 = x.scalar_type() == torch::kBFloat16;
  at::parallel_for(0, x.size(0) * heads, std::max<int64_t>(1, kGrainElements / (seq * 2 * half)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t task = begin; task < end; ++task) {
                       const int64_t b = task / heads, h = task % heads;
                       const int64_t from = b * x.stride(0) + h * x.stride(1), to = b * y.stride(0) + h * y.stride(1);
                       if (bf16) {
                         kernels::rotate_half_rows_bf16(bf16_bits(x) + from, x.stride(2), c, s, seq, half, sign,
                                                        bf16_bits(y) + to, y.stride(2));
                       } else {
                         kernels::rotate_half_rows(x.data_ptr<float>() + from, x.stride(2), c, s, seq, half, sign,
                                                   y.data_ptr<float>() + to, y.stride(2));
                       }
                     }
                   });
}

// Forward rotates by the position's angles; backward rotates the gradient back (the transpose of a
// rotation is its inverse). Outputs and gradients take their inputs' memory layout.
struct RotaryFunction : public torch::autograd::Function<RotaryFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x_in, const torch::Tensor& cos,
                               const torch::Tensor& sin) {
    const auto x = rows_contiguous(x_in);
    auto y = torch::empty_like(x);
    rotate_heads(x, cos, sin, 1.0f, y);
    ctx->save_for_backward({cos, sin});
    ctx->saved_data["strides"] = y.strides().vec();
    ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
    return y;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    const auto grad = rows_contiguous(grads[0].to(dtype));
    auto dx = torch::empty_strided(grad.sizes(), ctx->saved_data["strides"].toIntVector(), grad.options());
    rotate_heads(grad, saved[0], saved[1], -1.0f, dx);
    return {dx, torch::Tensor(), torch::Tensor()};
  }
};

// RMSNorm over the last dimension of fp32 rows. Forward: one pass per row, keeping x and 1/rms; the
// output is fp32, or bf16 when autocast would round it for the bf16 products it feeds (one rounding
// of the same values, with no fp32 copy in between). Backward: one pass per row for dx, from either
// gradient; the weight's gradient is summed per block of kNormRowsPerBlock rows and the blocks added
// in order, so that it does not depend on the number of threads (runs resume bit-identically).
constexpr int64_t kNormRowsPerBlock = 64;

struct FusedRMSNormFunction : public torch::autograd::Function<FusedRMSNormFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x_in, const torch::Tensor& weight_in,
                               double eps, bool bf16_out) {
    const auto x = x_in.contiguous(), weight = weight_in.contiguous();
    const int64_t cols = x.size(-1), rows = x.numel() / cols;
    auto y = torch::empty_like(x, bf16_out ? torch::kBFloat16 : torch::kFloat);
    auto rstd = torch::empty({rows}, x.options());
    const float *in = x.data_ptr<float>(), *w = weight.data_ptr<float>();
    float* inverse = rstd.data_ptr<float>();
    at::parallel_for(0, rows, std::max<int64_t>(1, kGrainElements / cols), [&](int64_t begin, int64_t end) {
      const float e = static_cast<float>(eps);
      if (bf16_out) kernels::rms_norm_rows_bf16_out(in, w, cols, begin, end, e, inverse, bf16_bits(y));
      else kernels::rms_norm_rows(in, w, cols, begin, end, e, inverse, y.data_ptr<float>());
    });
    ctx->save_for_backward({x, weight, rstd});
    return y;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &weight = saved[1], &rstd = saved[2];
    const bool bf16_grad = grads[0].scalar_type() == torch::kBFloat16;
    const auto grad = bf16_grad ? grads[0].contiguous() : grads[0].to(torch::kFloat).contiguous();
    const int64_t cols = x.size(-1), rows = x.numel() / cols;
    const int64_t blocks = (rows + kNormRowsPerBlock - 1) / kNormRowsPerBlock;
    auto dx = torch::empty_like(x);
    auto block_sums = torch::zeros({blocks, cols}, x.options());
    const float *in = x.data_ptr<float>(), *w = weight.data_ptr<float>(), *inverse = rstd.data_ptr<float>();
    float *out = dx.data_ptr<float>(), *sums = block_sums.data_ptr<float>();
    at::parallel_for(0, blocks, 1, [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; ++b) {
        const int64_t begin = b * kNormRowsPerBlock, end = std::min(rows, begin + kNormRowsPerBlock);
        if (bf16_grad) {
          kernels::rms_norm_backward_rows_bf16_grad(in, w, inverse, bf16_bits(grad), cols, begin, end, out,
                                                    sums + b * cols);
        } else {
          kernels::rms_norm_backward_rows(in, w, inverse, grad.data_ptr<float>(), cols, begin, end, out,
                                          sums + b * cols);
        }
      }
    });
    for (int64_t b = 1; b < blocks; ++b) {  // in block order, in place: one loop, not an ATen call per block
      const float* block = sums + b * cols;
      for (int64_t j = 0; j < cols; ++j) sums[j] += block[j];
    }
    return {dx, block_sums[0].clone(), torch::Tensor(), torch::Tensor()};
  }
};

// Forward: h = silu(g) * u in one pass, keeping g and u (the composite keeps g, silu(g) and u).
// Backward: both gradients in one pass, recomputing sigmoid(g). fp32 or bf16 (gate and up alike).
struct SwiGLUFunction : public torch::autograd::Function<SwiGLUFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& gate_in, const torch::Tensor& up_in) {
    const auto gate = gate_in.contiguous(), up = up_in.contiguous();
    auto h = torch::empty_like(gate);
    const bool bf16 = gate.scalar_type() == torch::kBFloat16;
    at::parallel_for(0, gate.numel(), kGrainElements, [&](int64_t begin, int64_t end) {
      if (bf16) {
        kernels::swiglu_bf16(bf16_bits(gate) + begin, bf16_bits(up) + begin, end - begin, bf16_bits(h) + begin);
      } else {
        kernels::swiglu(gate.data_ptr<float>() + begin, up.data_ptr<float>() + begin, end - begin,
                        h.data_ptr<float>() + begin);
      }
    });
    ctx->save_for_backward({gate, up});
    return h;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &gate = saved[0], &up = saved[1];
    const auto grad = grads[0].to(gate.scalar_type()).contiguous();
    auto d_gate = torch::empty_like(gate), d_up = torch::empty_like(up);
    const bool bf16 = gate.scalar_type() == torch::kBFloat16;
    at::parallel_for(0, gate.numel(), kGrainElements, [&](int64_t begin, int64_t end) {
      const int64_t n = end - begin;
      if (bf16) {
        kernels::swiglu_backward_bf16(bf16_bits(gate) + begin, bf16_bits(up) + begin, bf16_bits(grad) + begin, n,
                                      bf16_bits(d_gate) + begin, bf16_bits(d_up) + begin);
      } else {
        kernels::swiglu_backward(gate.data_ptr<float>() + begin, up.data_ptr<float>() + begin,
                                 grad.data_ptr<float>() + begin, n, d_gate.data_ptr<float>() + begin,
                                 d_up.data_ptr<float>() + begin);
      }
    });
    return {d_gate, d_up};
  }
};

}  // namespace

torch::Tensor rows_contiguous(const torch::Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); }

uint16_t* bf16_bits(const torch::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); }

torch::Tensor rotate_half(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const bool fused = x.device().is_cpu() && fused_dtype(x) && x.dim() == 4 && x.size(-1) % 2 == 0 &&
                     cos.scalar_type() == torch::kFloat && cos.is_contiguous() && sin.is_contiguous();
  if (fused) return RotaryFunction::apply(x, cos, sin);
  const auto halves = x.chunk(2, -1);
  const auto c = cos.to(x.scalar_type()), s = sin.to(x.scalar_type());
  return torch::cat({halves[0] * c - halves[1] * s, halves[1] * c + halves[0] * s}, -1);
}

bool uses_cpu_rms_norm(const torch::Tensor& x, const torch::Tensor& weight) {
  return x.device().is_cpu() && x.scalar_type() == torch::kFloat && weight.scalar_type() == torch::kFloat &&
         x.dim() >= 1 && x.numel() > 0 && x.size(-1) == weight.numel();
}

torch::Tensor rms_norm_cpu(const torch::Tensor& x, const torch::Tensor& weight, double eps, bool bf16_out) {
  return FusedRMSNormFunction::apply(x, weight, eps, bf16_out);
}

torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up) {
  const bool fused = gate.device().is_cpu() && fused_dtype(gate) && up.scalar_type() == gate.scalar_type() &&
                     gate.sizes() == up.sizes();
  if (fused) return SwiGLUFunction::apply(gate, up);
  return torch::silu(gate) * up;
}

LossTerms cross_entropy_with_z_loss(const torch::Tensor& logits, const torch::Tensor& targets, int64_t ignore_index,
                                    double z_weight) {
  const bool fused = logits.device().is_cpu() && fused_dtype(logits) && logits.dim() == 2 &&
                     targets.dim() == 1 && logits.size(1) > 0;
  if (!fused) return composite_loss(logits, targets, ignore_index, z_weight);
  const auto terms = CrossEntropyFunction::apply(logits, targets, ignore_index, z_weight);
  return {terms[0], terms[1]};
}

}  // namespace ffnshape::nn
