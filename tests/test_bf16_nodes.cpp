// The bf16 CPU nodes (training under autocast) against their formulas in double, evaluated on the
// same bf16 inputs. The element-wise nodes compute in fp32 and round once, so each value is within
// one bf16 rounding (2^-8 relative) of the exact one. Attention's products round their operands (the
// probabilities and ds) to bf16 as LibTorch's flash kernel does: it must be at least as close to the
// exact values as that kernel.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "../src/nn/causal_attention_cpu.h"
#include "../src/nn/fused_ops.h"
#include "ffnshape/compat.h"
#include "ffnshape/nn/rms_norm.h"

using namespace ffnshape;
using namespace ffnshape::nn;

namespace {

constexpr double kBf16Rounding = 1.0 / 256;  // 2^-8: one rounding to bf16's 8 significant bits, relative

torch::Tensor bf16_randn(at::IntArrayRef sizes, double scale = 1.0) {
  return (torch::randn(sizes) * scale).to(torch::kBFloat16);
}

torch::Tensor as_double(const torch::Tensor& t) { return t.detach().to(torch::kDouble); }

// Largest elementwise error in units of the exact value's bf16 rounding, beyond an absolute floor
// for values near zero (where fp32's own arithmetic error dominates).
double worst_roundings(const torch::Tensor& got, const torch::Tensor& exact, double floor = 1e-6) {
  const auto error = (as_double(got) - exact).abs();
  return (error / (exact.abs() * kBf16Rounding + floor)).max().item<double>();
}

double relative_gap(const torch::Tensor& a, const torch::Tensor& b) {
  return ((as_double(a) - b).abs().max() / b.abs().max().clamp_min(1e-12)).item<double>();
}

}  // namespace

TEST(Bf16Nodes, SwiGLUIsTheFormulaRoundedOnce) {
  torch::manual_seed(31);
  auto gate = bf16_randn({37, 53}, 4.0);
  gate.index_put_({0, 0}, 100.0);  // the sigmoid's saturation on both sides
  gate.index_put_({0, 1}, -100.0);
  gate.requires_grad_();
  const auto up = bf16_randn({37, 53}).requires_grad_();
  const auto upstream = bf16_randn({37, 53});
  const auto h = swiglu(gate, up);
  ASSERT_EQ(h.scalar_type(), torch::kBFloat16);
  h.backward(upstream);

  const auto g = as_double(gate), u = as_double(up), dh = as_double(upstream);
  const auto s = torch::sigmoid(g);
  EXPECT_LE(worst_roundings(h, g * s * u), 1.0);
  EXPECT_LE(worst_roundings(up.grad(), dh * g * s), 1.0);
  EXPECT_LE(worst_roundings(gate.grad(), dh * u * s * (1 + g * (1 - s))), 1.0);
  ASSERT_EQ(gate.grad().scalar_type(), torch::kBFloat16);

  auto with_nan = bf16_randn({40});
  with_nan.index_put_({7}, NAN);
  const auto out = swiglu(with_nan, torch::ones({40}, torch::kBFloat16));
  EXPECT_TRUE(out[7].isnan().item<bool>());
  EXPECT_EQ(out.isnan().sum().item<int64_t>(), 1);
}

// On heads laid out as the model's (a transposed view of the projection): the result keeps that
// layout, and the backward rotates back.
TEST(Bf16Nodes, RotaryEmbeddingIsTheFormulaRoundedOnce) {
  torch::manual_seed(32);
  const int64_t d = 10, T = 7, half = d / 2;
  const auto angles = torch::outer(torch::arange(3, 3 + T, torch::kDouble), torch::rand({half}, torch::kDouble) * 2);
  const auto cos = angles.cos().to(torch::kFloat), sin = angles.sin().to(torch::kFloat);
  const auto x = bf16_randn({2, T, 3, d}).transpose(1, 2).requires_grad_();
  const auto upstream = bf16_randn({2, 3, T, d});
  const auto y = rotate_half(x, cos, sin);
  ASSERT_EQ(y.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(y.strides(), x.strides());
  y.backward(upstream);

  const auto c = as_double(cos), s = as_double(sin);
  auto rotate = [&](const torch::Tensor& v, double sign) {
    const auto v1 = v.narrow(-1, 0, half), v2 = v.narrow(-1, half, half);
    return torch::cat({v1 * c - sign * v2 * s, v2 * c + sign * v1 * s}, -1);
  };
  EXPECT_LE(worst_roundings(y, rotate(as_double(x), 1.0)), 1.0);
  EXPECT_LE(worst_roundings(x.grad(), rotate(as_double(upstream), -1.0)), 1.0);
}

// The loss from bf16 logits is the fp32 loss of the same values, and its gradient is the exact
// gradient rounded once; ignored rows get none.
TEST(Bf16Nodes, LossFromBf16LogitsIsFp32AndItsGradientIsRoundedOnce) {
  torch::manual_seed(33);
  const int64_t rows = 48, vocab = 97;  // a vector body and a scalar tail per row
  const auto logits = bf16_randn({rows, vocab}, 3.0).requires_grad_();
  auto targets = torch::randint(0, vocab, {rows}, torch::kLong);
  targets.narrow(0, 5, 4).fill_(-1);
  const auto terms = cross_entropy_with_z_loss(logits, targets, -1, 1e-2);
  ASSERT_EQ(terms.cross_entropy.scalar_type(), torch::kFloat);
  ((terms.cross_entropy + terms.z_loss) * 3.0).backward();
  ASSERT_EQ(logits.grad().scalar_type(), torch::kBFloat16);

  const auto x = as_double(logits).requires_grad_();
  const auto keep = targets.ne(-1);
  const auto lse = torch::logsumexp(x.index({keep}), -1);
  const auto picked = x.index({keep}).gather(1, targets.index({keep}).unsqueeze(1)).squeeze(1);
  const auto ce = (lse - picked).mean(), z = 1e-2 * lse.pow(2).mean();
  ((ce + z) * 3.0).backward();
  EXPECT_NEAR(terms.cross_entropy.item<double>(), ce.item<double>(), 1e-6);
  EXPECT_NEAR(terms.z_loss.item<double>(), z.item<double>(), 1e-7);
  EXPECT_LE(worst_roundings(logits.grad(), x.grad(), 1e-9), 1.0);
  EXPECT_EQ(as_double(logits.grad()).index({targets.eq(-1)}).abs().max().item<double>(), 0.0);
}

// Attention in bf16 against the masked-softmax formula in double on the same bf16 q, k, v: output
// and the three gradients, with grouped-query heads, a sequence ending inside a 64-row block and one
// position. Each is within 1.5 bf16 roundings of the largest exact value, and within twice the gap
// of LibTorch's flash kernel on the same inputs (measured: 0.0023-0.0048 against flash's
// 0.0017-0.0071; a wrong mask, scale or gradient term gives gaps of order 1).
TEST(Bf16Nodes, AttentionIsWithinBf16PrecisionOfTheFormula) {
  torch::manual_seed(34);
  at::set_num_threads(2);
  struct Case {
    int64_t batch, heads, kv_heads, seq, dim;
  };
  for (const auto& c : {Case{2, 4, 4, 150, 16}, Case{2, 4, 2, 70, 32}, Case{2, 2, 2, 1, 8}}) {
    auto layout = [&](int64_t heads) {  // (batch, seq, heads, dim) memory seen as (batch, heads, seq, dim)
      return bf16_randn({c.batch, c.seq, heads, c.dim}).transpose(1, 2);
    };
    const auto q = layout(c.heads), k = layout(c.kv_heads), v = layout(c.kv_heads);
    const auto upstream = bf16_randn({c.batch, c.heads, c.seq, c.dim});
    ASSERT_TRUE(uses_cpu_attention_node(q, k, v)) << c.seq;
    const int64_t group = c.heads / c.kv_heads;

    std::vector<torch::Tensor> ref_in;
    for (const auto& t : {q, k, v}) ref_in.push_back(as_double(t).requires_grad_());
    const auto expected = compat::causal_attention_reference(ref_in[0], ref_in[1].repeat_interleave(group, 1),
                                                             ref_in[2].repeat_interleave(group, 1));
    expected.backward(as_double(upstream));

    auto gaps = [&](bool ours) {
      std::vector<torch::Tensor> in{q.clone().requires_grad_(), k.clone().requires_grad_(),
                                    v.clone().requires_grad_()};
      const auto out = ours ? causal_attention(in[0], in[1], in[2])
                            : compat::causal_attention(in[0], in[1].repeat_interleave(group, 1),
                                                       in[2].repeat_interleave(group, 1));
      EXPECT_EQ(out.scalar_type(), torch::kBFloat16);
      out.backward(upstream);
      std::vector<double> result{relative_gap(out, expected.detach())};
      for (int i = 0; i < 3; ++i) result.push_back(relative_gap(in[i].grad(), ref_in[i].grad()));
      return result;
    };
    const auto ours = gaps(true), flash = gaps(false);
    for (size_t i = 0; i < ours.size(); ++i) {
      EXPECT_LT(ours[i], 1.5 * kBf16Rounding) << "seq " << c.seq << ", output/grad " << i;
      EXPECT_LE(ours[i], 2 * flash[i] + kBf16Rounding / 4) << "seq " << c.seq << ", output/grad " << i;
    }
  }
}

// A NaN query makes its own row NaN and leaves the earlier queries alone, as in fp32.
TEST(Bf16Nodes, AttentionNanStaysInItsRow) {
  auto q = bf16_randn({2, 2, 10, 8});
  const auto k = bf16_randn({2, 2, 10, 8}), v = bf16_randn({2, 2, 10, 8});
  q[0][0][4][0] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_TRUE(uses_cpu_attention_node(q, k, v));
  const auto out = causal_attention(q, k, v);
  EXPECT_TRUE(out[0][0][4].isnan().all().item<bool>());
  EXPECT_FALSE(out[0][0].narrow(0, 0, 4).isnan().any().item<bool>());
  EXPECT_FALSE(out[1].isnan().any().item<bool>());
}

// Under CPU autocast to bf16 the norm of an fp32 input comes out in bf16: the fp32 result rounded
// once, bit for bit; its backward takes the bf16 gradient and gives fp32 dx and weight gradients equal
// to the formula's in double. Outside autocast it stays fp32.
TEST(Bf16Nodes, NormUnderAutocastRoundsItsOutputOnce) {
  torch::manual_seed(35);
  RMSNorm norm(347, 1e-5);  // rows that end in a scalar tail
  {
    torch::NoGradGuard no_grad;
    norm->weight.copy_(torch::randn({347}) * 0.3 + 1.0);
  }
  const auto x = (torch::randn({3, 70, 347}) * 2).requires_grad_();
  const auto upstream = bf16_randn({3, 70, 347});
  torch::Tensor y;
  {
    compat::AutocastGuard autocast(torch::kCPU, torch::kBFloat16);
    y = norm(x);
  }
  ASSERT_EQ(y.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(norm(x).scalar_type(), torch::kFloat);
  EXPECT_TRUE(torch::equal(y, norm(x).to(torch::kBFloat16)));
  y.backward(upstream);

  const auto xd = as_double(x).requires_grad_();
  const auto wd = as_double(norm->weight).requires_grad_();
  const auto expected = xd / torch::sqrt(xd.pow(2).mean(-1, true) + 1e-5) * wd;
  expected.backward(as_double(upstream));
  ASSERT_EQ(x.grad().scalar_type(), torch::kFloat);
  EXPECT_LT(relative_gap(x.grad(), xd.grad()), 1e-5);
  EXPECT_LT(relative_gap(norm->weight.grad(), wd.grad()), 1e-5);
}
