// The only place that knows LibTorch versions. ffnshape builds against LibTorch 2.5 or newer (CPU or
// CUDA; the pinned and tested one is the PyPI torch wheel's, see README); everything else calls these.
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <ATen/autocast_mode.h>

#include <cmath>
#include <limits>
#include <optional>

static_assert(TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5),
              "ffnshape needs LibTorch 2.5 or newer (scaled_dot_product_attention with enable_gqa)");

#define FFNSHAPE_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace ffnshape::compat {

// Causal attention written out: softmax(q k^T / sqrt(d) + causal mask) v, with the softmax in fp32.
// q, k, v: (batch, heads, seq, head_dim) with equal head counts. The reference the fused path is
// tested against.
inline torch::Tensor causal_attention_reference(const torch::Tensor& q, const torch::Tensor& k,
                                                const torch::Tensor& v) {
  const auto seq = q.size(-2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)).to(torch::kFloat) / std::sqrt(static_cast<double>(q.size(-1)));
  auto future = torch::ones({seq, seq}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).triu(1);
  scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  return torch::matmul(torch::softmax(scores, -1).to(v.scalar_type()), v);
}

// Causal scaled-dot-product attention through LibTorch's fused operator (flash / memory-efficient
// kernels on CUDA). k and v may have fewer heads than q (grouped-query attention): each kv head
// serves q.size(1) / k.size(1) consecutive query heads, without materialising the repeats.
inline torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const bool grouped = q.size(1) != k.size(1);
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true,
                                          /*scale=*/std::nullopt, /*enable_gqa=*/grouped);
}

// Attention of new queries over cached keys and values: q holds the last q.size(-2) of the
// k.size(-2) positions, and query i sees keys 0 .. offset + i (offset = k.size(-2) - q.size(-2)).
inline torch::Tensor cached_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const auto seq = q.size(-2), total = k.size(-2);
  const bool grouped = q.size(1) != k.size(1);
  if (seq == total) return causal_attention(q, k, v);
  std::optional<torch::Tensor> mask;  // a single new query sees every key: no mask
  if (seq > 1) {
    const auto opts = torch::TensorOptions().dtype(torch::kLong).device(q.device());
    mask = torch::arange(total, opts).unsqueeze(0) <= torch::arange(total - seq, total, opts).unsqueeze(1);
  }
  return at::scaled_dot_product_attention(q, k, v, mask, /*dropout_p=*/0.0, /*is_causal=*/false,
                                          /*scale=*/std::nullopt, /*enable_gqa=*/grouped);
}

// Mixed precision: autocast to `dtype` on the given device type (CPU or CUDA) while the guard lives.
class AutocastGuard {
 public:
  AutocastGuard(torch::DeviceType device, torch::ScalarType dtype, bool enabled = true)
      : device_(device), enabled_(enabled) {
    if (!enabled_) return;
    previous_enabled_ = at::autocast::is_autocast_enabled(device_);
    previous_dtype_ = at::autocast::get_autocast_dtype(device_);
    at::autocast::set_autocast_dtype(device_, dtype);
    at::autocast::set_autocast_enabled(device_, true);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!enabled_) return;
    // Leaving the outermost autocast region frees its cache of cast weights.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_, previous_enabled_);
    at::autocast::set_autocast_dtype(device_, previous_dtype_);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  torch::DeviceType device_;
  bool enabled_;
  bool previous_enabled_ = false;
  torch::ScalarType previous_dtype_ = torch::kBFloat16;
};

// The autocast dtype in force on `device` now, or nothing when autocast is off there (what a
// recomputation must restore to reproduce a forward pass).
inline std::optional<torch::ScalarType> active_autocast(torch::DeviceType device) {
  if (!at::autocast::is_autocast_enabled(device)) return std::nullopt;
  return at::autocast::get_autocast_dtype(device);
}

// TF32 tensor cores for fp32 matrix products and convolutions on CUDA (no effect on the CPU).
inline void set_cuda_tf32(bool allowed) {
#if FFNSHAPE_TORCH_AT_LEAST(2, 9)
  const auto precision = allowed ? at::Float32Precision::TF32 : at::Float32Precision::IEEE;
  at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL, precision);
  at::globalContext().setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::CONV, precision);
#else
  at::globalContext().setAllowTF32CuBLAS(allowed);
  at::globalContext().setAllowTF32CuDNN(allowed);
#endif
}

inline bool cuda_tf32() {
#if FFNSHAPE_TORCH_AT_LEAST(2, 9)
  return at::globalContext().float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL) ==
         at::Float32Precision::TF32;
#else
  return at::globalContext().allowTF32CuBLAS();
#endif
}

// Deterministic kernels where LibTorch has them; an operator without one raises an error naming it.
inline void set_deterministic(bool deterministic) {
  at::globalContext().setDeterministicAlgorithms(deterministic, /*warn_only=*/false);
  at::globalContext().setDeterministicCuDNN(deterministic);
  at::globalContext().setBenchmarkCuDNN(false);
}

inline bool deterministic() { return at::globalContext().deterministicAlgorithms(); }

// One AdamW step over tensors of one device in a single fused kernel (CPU and CUDA), the operator
// behind torch.optim.AdamW(fused=True). `steps` holds each parameter's step count after this step,
// as float32 scalars on the parameters' device.
inline void fused_adamw_step(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads,
                             const std::vector<torch::Tensor>& exp_avgs, const std::vector<torch::Tensor>& exp_avg_sqs,
                             const std::vector<torch::Tensor>& steps, double lr, double beta1, double beta2,
                             double weight_decay, double eps) {
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, beta1, beta2,
                    weight_decay, eps, /*amsgrad=*/false, /*maximize=*/false);
}

}  // namespace ffnshape::compat
