// The only place that knows LibTorch versions. Debian's 1.13 (CPU) and CUDA builds of 2.x both
// compile against this header; everything else in ffnshape calls these functions.
#pragma once

#include <torch/torch.h>
#include <torch/version.h>

#include <ATen/autocast_mode.h>

#include <cmath>
#include <limits>

#define FFNSHAPE_TORCH_2 (TORCH_VERSION_MAJOR >= 2)

namespace ffnshape::compat {

// Causal attention written out: softmax(q k^T / sqrt(d) + causal mask) v, with the softmax in fp32.
// q, k, v: (batch, heads, seq, head_dim) with equal head counts.
inline torch::Tensor causal_attention_reference(const torch::Tensor& q, const torch::Tensor& k,
                                                const torch::Tensor& v) {
  const auto seq = q.size(-2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)).to(torch::kFloat) / std::sqrt(static_cast<double>(q.size(-1)));
  auto future = torch::ones({seq, seq}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).triu(1);
  scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  return torch::matmul(torch::softmax(scores, -1).to(v.scalar_type()), v);
}

// Causal scaled-dot-product attention through the library's fused operator (flash / memory-efficient
// kernels on CUDA with 2.x; 1.13 has the private, pair-returning form).
inline torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
#if FFNSHAPE_TORCH_2
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true);
#else
  return std::get<0>(at::_scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                                       /*need_attn_weights=*/false, /*is_causal=*/true));
#endif
}

// Mixed precision: autocast to `dtype` on the given device type (CPU or CUDA) while the guard lives.
class AutocastGuard {
 public:
  AutocastGuard(torch::DeviceType device, torch::ScalarType dtype, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  torch::DeviceType device_;
  bool enabled_;
  bool previous_enabled_ = false;
  torch::ScalarType previous_dtype_ = torch::kBFloat16;
};

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
// 2.4+: device-generic autocast state.
inline AutocastGuard::AutocastGuard(torch::DeviceType device, torch::ScalarType dtype, bool enabled)
    : device_(device), enabled_(enabled) {
  if (!enabled_) return;
  previous_enabled_ = at::autocast::is_autocast_enabled(device_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_);
  at::autocast::set_autocast_dtype(device_, dtype);
  at::autocast::set_autocast_enabled(device_, true);
  at::autocast::increment_nesting();
}

inline AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  // Leaving the outermost autocast region frees its cache of cast weights.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_, previous_dtype_);
}
#else
// 1.13 - 2.3: separate CPU and GPU autocast state.
inline AutocastGuard::AutocastGuard(torch::DeviceType device, torch::ScalarType dtype, bool enabled)
    : device_(device), enabled_(enabled) {
  if (!enabled_) return;
  if (device_ == torch::kCUDA) {
    previous_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(true);
  } else {
    previous_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(true);
  }
  at::autocast::increment_nesting();
}

inline AutocastGuard::~AutocastGuard() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (device_ == torch::kCUDA) {
    at::autocast::set_enabled(previous_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
  } else {
    at::autocast::set_cpu_enabled(previous_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
  }
}
#endif

}  // namespace ffnshape::compat
