#include "ffnshape/nn/rope.h"

#include <cmath>

#include "fused_ops.h"

namespace ffnshape::nn {

torch::Tensor rope_inverse_frequencies(int64_t head_dim, double theta, const std::optional<RopeScaling>& scaling) {
  auto exponents = torch::arange(0, head_dim, 2, torch::kDouble) / static_cast<double>(head_dim);
  auto inv_freq = torch::pow(theta, -exponents);
  if (!scaling) return inv_freq.to(torch::kFloat);
  // Llama-3: keep high frequencies, divide low ones by `factor`, interpolate smoothly in between.
  const auto& s = *scaling;
  const double orig = static_cast<double>(s.original_max_seq_len);
  const double low_freq_wavelen = orig / s.low_freq_factor;
  const double high_freq_wavelen = orig / s.high_freq_factor;
  auto wavelen = 2.0 * M_PI / inv_freq;
  auto smooth = (orig / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  auto interpolated = (1.0 - smooth) * inv_freq / s.factor + smooth * inv_freq;
  auto scaled = torch::where(wavelen > low_freq_wavelen, inv_freq / s.factor, interpolated);
  scaled = torch::where(wavelen < high_freq_wavelen, inv_freq, scaled);
  return scaled.to(torch::kFloat);
}

RotaryEmbeddingImpl::RotaryEmbeddingImpl(int64_t head_dim, int64_t max_seq_len, double theta,
                                         const std::optional<RopeScaling>& scaling) {
  const auto inv_freq = rope_inverse_frequencies(head_dim, theta, scaling).to(torch::kDouble);
  const auto angles = torch::outer(torch::arange(max_seq_len, torch::kDouble), inv_freq);
  cos = register_buffer("cos", angles.cos().to(torch::kFloat));
  sin = register_buffer("sin", angles.sin().to(torch::kFloat));
}

torch::Tensor RotaryEmbeddingImpl::forward(const torch::Tensor& x, int64_t offset) {
  const auto seq = x.size(-2);
  TORCH_CHECK(offset + seq <= cos.size(0), "sequence length ", offset + seq, " exceeds model.max_seq_len ", cos.size(0));
  return rotate_half(x, cos.narrow(0, offset, seq), sin.narrow(0, offset, seq));
}

}  // namespace ffnshape::nn
