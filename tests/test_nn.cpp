// Model components against hand-written formulas: norms, rotary embeddings, attention, the FFN stack,
// both block families, the language model's loss, initialisation and gradients; the KV cache against
// the full forward pass, and generation.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <set>

#include "../src/nn/causal_attention_cpu.h"
#include "../src/nn/fused_ops.h"
#include "ffnshape/compat.h"
#include "ffnshape/nn/generation.h"
#include "ffnshape/nn/model.h"
#include "ffnshape/params/count.h"

using namespace ffnshape;
using namespace ffnshape::nn;

namespace {

ModelConfig tiny(Family family = Family::llama) {
  auto c = ModelConfig::defaults_for(family);
  c.vocab_size = 97;
  c.d_model = 32;
  c.n_layers = 2;
  c.n_heads = 4;
  c.max_seq_len = 16;
  c.ffn.hidden = 48;
  return c;
}

ModelConfig hourglass(Family family, int64_t k, int64_t d_h) {
  auto c = tiny(family);
  c.ffn.kind = FfnKind::hourglass;
  c.ffn.k = k;
  c.ffn.hidden = d_h;
  return c;
}

torch::Tensor rms(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  return x / torch::sqrt(x.pow(2).mean(-1, true) + eps) * w;
}

torch::Tensor swiglu(SwiGLUSubBlock& b, const torch::Tensor& u) {
  return torch::matmul(torch::silu(torch::matmul(u, b->gate->weight.t())) * torch::matmul(u, b->up->weight.t()),
                       b->down->weight.t());
}

// Give norm weights random values, so that the formulas below cannot pass by multiplying by one.
void randomize(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.parameters()) p.copy_(torch::randn_like(p) * 0.3 + (p.dim() == 1 ? 1.0 : 0.0));
}

// Largest difference of `a` from the double reference `b`, relative to b's largest magnitude (a
// reference of exact zeros, as one position's q and k gradients in attention, counts as 1e-12).
double relative_gap(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a.to(torch::kDouble) - b).abs().max() / b.abs().max().clamp_min(1e-12)).item<double>();
}

bool close(const torch::Tensor& a, const torch::Tensor& b, double tol = 1e-5) {
  return torch::allclose(a, b, tol, tol);
}

}  // namespace

TEST(RMSNorm, MatchesFormula) {
  torch::manual_seed(0);
  RMSNorm norm(8, 1e-5);
  randomize(*norm);
  const auto x = torch::randn({3, 5, 8});
  EXPECT_TRUE(close(norm(x), rms(x, norm->weight, 1e-5)));
  // bf16 input: computed in fp32, returned in bf16.
  EXPECT_EQ(norm(x.to(torch::kBFloat16)).scalar_type(), torch::kBFloat16);
}

// The hand-written backward against autograd of the formula in double: input and weight gradients
// of an fp32 input (fp32 rounding only), and of a bf16 input (gradient returned in bf16; the
// gradient arriving at the bf16 output is itself rounded to bf16, as with any bf16 activation).
TEST(RMSNorm, BackwardMatchesAutogradOfTheFormula) {
  torch::manual_seed(1);
  RMSNorm norm(16, 1e-5);
  randomize(*norm);
  const auto upstream = torch::randn({4, 7, 16});
  auto reference = [&](const torch::Tensor& x) {  // autograd of the formula in double
    auto xr = x.to(torch::kDouble).requires_grad_(true);
    auto wr = norm->weight.detach().to(torch::kDouble).requires_grad_(true);
    (rms(xr, wr, 1e-5) * upstream.to(x.scalar_type()).to(torch::kDouble)).sum().backward();
    return std::make_pair(xr.grad(), wr.grad());
  };
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    norm->zero_grad();
    auto x = torch::randn({4, 7, 16}).to(dtype).requires_grad_(true);
    (norm(x).to(torch::kFloat) * upstream).sum().backward();
    const auto [dx, dw] = reference(x.detach());
    EXPECT_EQ(x.grad().scalar_type(), dtype);
    const double tol = dtype == torch::kFloat ? 1e-6 : 1e-2;  // bf16: the result's own rounding
    EXPECT_LT(relative_gap(x.grad(), dx), tol) << dtype;
    EXPECT_LT(relative_gap(norm->weight.grad(), dw), tol) << dtype;
  }
}

// The fused fp32 CPU node on 150 rows (two whole blocks of the weight gradient's 64-row sums and a
// partial one), 37 columns (not a multiple of the vector width) and a non-contiguous input, against
// the formula in double; the weight gradient is the same bits on one thread and on three.
TEST(RMSNorm, FusedCpuNodeMatchesFormulaAndIgnoresThreadCount) {
  torch::manual_seed(3);
  RMSNorm norm(37, 1e-5);
  randomize(*norm);
  ASSERT_TRUE(uses_cpu_rms_norm(torch::zeros({1, 37}), norm->weight));
  const auto input = (torch::randn({37, 150}) * 3.0).t();  // (150, 37), column-major
  const auto upstream = torch::randn({150, 37});
  auto xr = input.to(torch::kDouble).requires_grad_(true);
  auto wr = norm->weight.detach().to(torch::kDouble).requires_grad_(true);
  const auto expected = rms(xr, wr, 1e-5);
  (expected * upstream.to(torch::kDouble)).sum().backward();
  const int threads = torch::get_num_threads();
  std::vector<torch::Tensor> weight_grads;
  for (const int n : {1, 3}) {
    torch::set_num_threads(n);
    norm->zero_grad();
    auto x = input.detach().requires_grad_(true);
    const auto y = norm(x);
    (y * upstream).sum().backward();
    EXPECT_LT(relative_gap(y, expected.detach()), 1e-6) << n;
    EXPECT_LT(relative_gap(x.grad(), xr.grad()), 1e-6) << n;
    EXPECT_LT(relative_gap(norm->weight.grad(), wr.grad()), 1e-6) << n;
    weight_grads.push_back(norm->weight.grad().clone());
  }
  torch::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(weight_grads[0], weight_grads[1]));
}

TEST(Rope, RotatesPairsByPositionTimesFrequency) {
  const int64_t d = 4;
  RotaryEmbedding rope(d, 8, 100.0);
  const auto x = torch::randn({1, 1, 8, d});
  const auto y = rope(x);
  for (int64_t p = 0; p < 8; ++p) {
    for (int64_t i = 0; i < d / 2; ++i) {
      const double angle = p * std::pow(100.0, -2.0 * i / d);
      const double a = x[0][0][p][i].item<double>(), b = x[0][0][p][i + d / 2].item<double>();
      EXPECT_NEAR(y[0][0][p][i].item<double>(), a * std::cos(angle) - b * std::sin(angle), 1e-5);
      EXPECT_NEAR(y[0][0][p][i + d / 2].item<double>(), b * std::cos(angle) + a * std::sin(angle), 1e-5);
    }
  }
}


// The fused CPU rotation (fp32) against the rotate-half formula in double, forward and backward, on
// heads laid out as the model's (a transposed view of the projection) at a position offset.
TEST(Rope, FusedRotationMatchesFormulaWithGradient) {
  torch::manual_seed(5);
  const int64_t d = 10, T = 7, offset = 3;
  RotaryEmbedding rope(d, 16, 500.0);
  const auto x = torch::randn({2, T, 3, d}).transpose(1, 2).requires_grad_();  // (batch, heads, seq, dim)
  const auto upstream = torch::randn({2, 3, T, d});
  const auto y = rope(x, offset);
  (y * upstream).sum().backward();
  EXPECT_EQ(y.strides(), x.strides());  // the result keeps the input's layout: no copy downstream

  const auto xd = x.detach().to(torch::kDouble).requires_grad_();
  const auto angles = torch::outer(torch::arange(offset, offset + T, torch::kDouble),
                                   rope_inverse_frequencies(d, 500.0).to(torch::kDouble));
  const auto c = angles.cos(), s = angles.sin();
  const auto x1 = xd.narrow(-1, 0, d / 2), x2 = xd.narrow(-1, d / 2, d / 2);
  const auto expected = torch::cat({x1 * c - x2 * s, x2 * c + x1 * s}, -1);
  (expected * upstream.to(torch::kDouble)).sum().backward();
  EXPECT_LT((y.to(torch::kDouble) - expected).abs().max().item<double>(), 1e-5);
  EXPECT_LT((x.grad().to(torch::kDouble) - xd.grad()).abs().max().item<double>(), 1e-5);
}
TEST(Rope, DotProductDependsOnlyOnRelativePosition) {
  torch::manual_seed(1);
  const int64_t d = 16, T = 12;
  RotaryEmbedding rope(d, T, 10000.0);
  // The same q and k vector at every position.
  const auto q = rope(torch::randn({1, 1, 1, d}).expand({1, 1, T, d}).contiguous())[0][0];
  const auto k = rope(torch::randn({1, 1, 1, d}).expand({1, 1, T, d}).contiguous())[0][0];
  const auto scores = torch::matmul(q, k.t());  // scores[m][n] = <R_m q, R_n k>
  for (int64_t shift = 1; shift < 5; ++shift) {
    for (int64_t m = 0; m + shift < T; ++m) {
      for (int64_t n = 0; n + shift < T; ++n) {
        EXPECT_NEAR(scores[m][n].item<double>(), scores[m + shift][n + shift].item<double>(), 1e-4);
      }
    }
  }
}

TEST(Rope, Llama3ScalingKeepsHighAndDividesLowFrequencies) {
  RopeScaling s{8.0, 1.0, 4.0, 64};
  const auto plain = rope_inverse_frequencies(64, 500000.0);
  const auto scaled = rope_inverse_frequencies(64, 500000.0, s);
  for (int64_t i = 0; i < 32; ++i) {
    const double f = plain[i].item<double>(), g = scaled[i].item<double>();
    const double wavelen = 2 * M_PI / f;
    if (wavelen < 64.0 / 4.0) {
      EXPECT_NEAR(g, f, 1e-9 + 1e-6 * f);
    } else if (wavelen > 64.0 / 1.0) {
      EXPECT_NEAR(g, f / 8.0, 1e-6 * f);
    } else {
      const double smooth = (64.0 / wavelen - 1.0) / 3.0;
      EXPECT_NEAR(g, (1 - smooth) * f / 8.0 + smooth * f, 1e-6 * f);
    }
  }
}

TEST(Attention, FusedOperatorEqualsReference) {
  torch::manual_seed(2);
  const auto q = torch::randn({2, 3, 7, 8}), k = torch::randn({2, 3, 7, 8}), v = torch::randn({2, 3, 7, 8});
  EXPECT_TRUE(close(compat::causal_attention(q, k, v), compat::causal_attention_reference(q, k, v)));
}

// The CPU attention node's output and q, k, v gradients against autograd of the masked-softmax
// formula in double: sequences that end inside a 64-row block, one position, grouped-query heads
// (whose gradients add over the query heads of a group), odd head sizes, and inputs laid out as the
// model's (heads as a transposed view of the projection).
TEST(Attention, CpuNodeMatchesFormulaInDouble) {
  torch::manual_seed(21);
  struct Case {
    int64_t batch, heads, kv_heads, seq, dim;
  };
  for (const auto& c : {Case{2, 4, 4, 150, 16}, Case{2, 2, 2, 1, 8}, Case{2, 4, 2, 70, 17}, Case{3, 6, 1, 129, 8}}) {
    at::set_num_threads(2);
    auto layout = [&](int64_t heads) {  // (batch, seq, heads, dim) memory seen as (batch, heads, seq, dim)
      return torch::randn({c.batch, c.seq, heads, c.dim}).transpose(1, 2);
    };
    const auto q = layout(c.heads), k = layout(c.kv_heads), v = layout(c.kv_heads);
    const auto upstream = torch::randn({c.batch, c.heads, c.seq, c.dim});
    ASSERT_TRUE(uses_cpu_attention_node(q, k, v)) << c.seq;
    std::vector<torch::Tensor> got_in{q.clone().requires_grad_(), k.clone().requires_grad_(),
                                      v.clone().requires_grad_()};
    const auto got = causal_attention(got_in[0], got_in[1], got_in[2]);
    (got * upstream).sum().backward();
    std::vector<torch::Tensor> ref_in;
    for (const auto& t : {q, k, v}) ref_in.push_back(t.to(torch::kDouble).requires_grad_());
    const int64_t group = c.heads / c.kv_heads;
    const auto expected = compat::causal_attention_reference(ref_in[0], ref_in[1].repeat_interleave(group, 1),
                                                             ref_in[2].repeat_interleave(group, 1));
    (expected * upstream.to(torch::kDouble)).sum().backward();
    EXPECT_LT(relative_gap(got, expected), 1e-5) << c.seq;
    for (int i = 0; i < 3; ++i) {
      EXPECT_LT(relative_gap(got_in[i].grad(), ref_in[i].grad()), 1e-5) << c.seq << " input " << i;
    }
  }
}

// Backward leaves the saved probabilities as they were: a second backward gives the same gradients.
TEST(Attention, CpuNodeBackwardTwiceGivesEqualGradients) {
  torch::manual_seed(22);
  const auto q = torch::randn({2, 2, 100, 8}, torch::requires_grad()), k = torch::randn({2, 2, 100, 8}),
             v = torch::randn({2, 2, 100, 8});
  ASSERT_TRUE(uses_cpu_attention_node(q, k, v));
  const auto loss = causal_attention(q, k, v).pow(2).sum();
  loss.backward({}, /*retain_graph=*/true);
  const auto first = q.grad().clone();
  q.grad().zero_();
  loss.backward();
  EXPECT_TRUE(torch::equal(first, q.grad()));
}

// Outside its range the node hands over to at::scaled_dot_product_attention.
TEST(Attention, CpuNodeRange) {
  at::set_num_threads(2);
  const auto fp32 = torch::randn({2, 2, 16, 8});
  EXPECT_TRUE(uses_cpu_attention_node(fp32, fp32, fp32));
  const auto bf16 = fp32.to(torch::kBFloat16);  // the bf16 node (test_bf16_nodes.cpp)
  EXPECT_TRUE(uses_cpu_attention_node(bf16, bf16, bf16));
  const auto fp16 = fp32.to(torch::kHalf);
  EXPECT_FALSE(uses_cpu_attention_node(fp16, fp16, fp16));
  const auto long_seq = torch::randn({2, 2, 513, 8});
  EXPECT_FALSE(uses_cpu_attention_node(long_seq, long_seq, long_seq));
  const auto one_head = torch::randn({1, 1, 16, 8});  // fewer heads than threads
  EXPECT_FALSE(uses_cpu_attention_node(one_head, one_head, one_head));
  EXPECT_TRUE(close(causal_attention(long_seq, long_seq, long_seq),
                    compat::causal_attention_reference(long_seq, long_seq, long_seq), 1e-4));
}

// A NaN score makes its own query's row NaN, as the formula does, and leaves earlier queries alone.
TEST(Attention, CpuNodeNanStaysInItsRows) {
  auto q = torch::randn({2, 2, 10, 8});
  const auto k = torch::randn({2, 2, 10, 8}), v = torch::randn({2, 2, 10, 8});
  q[0][0][4][0] = std::numeric_limits<float>::quiet_NaN();
  const auto out = causal_attention(q, k, v);
  EXPECT_TRUE(out[0][0][4].isnan().all().item<bool>());
  EXPECT_FALSE(out[0][0].narrow(0, 0, 4).isnan().any().item<bool>());
  EXPECT_FALSE(out[1].isnan().any().item<bool>());
}

// GQA and QK-norm against a per-head loop written from the definitions.
TEST(Attention, MatchesPerHeadFormulaWithGqaAndQkNorm) {
  torch::manual_seed(3);
  auto c = tiny();
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = 6;  // attention width 24, independent of d_model 32
  c.qk_norm = true;
  CausalSelfAttention attn(c);
  randomize(*attn);
  const int64_t T = 5, hd = 6;
  const auto x = torch::randn({1, T, c.d_model});
  auto q = rms(torch::matmul(x, attn->q_proj->weight.t()), attn->q_norm->weight, c.norm_eps)[0];
  auto k = rms(torch::matmul(x, attn->k_proj->weight.t()), attn->k_norm->weight, c.norm_eps)[0];
  auto v = torch::matmul(x, attn->v_proj->weight.t())[0];
  RotaryEmbedding rope(hd, c.max_seq_len, c.rope_theta);
  std::vector<torch::Tensor> outputs;
  for (int64_t h = 0; h < 4; ++h) {
    const int64_t g = h / 2;  // query heads 0,1 share kv head 0; 2,3 share kv head 1
    auto qh = rope(q.narrow(1, h * hd, hd).view({1, 1, T, hd}))[0][0];
    auto kh = rope(k.narrow(1, g * hd, hd).view({1, 1, T, hd}))[0][0];
    auto vh = v.narrow(1, g * hd, hd);
    auto scores = torch::matmul(qh, kh.t()) / std::sqrt(static_cast<double>(hd));
    scores = scores.masked_fill(torch::ones({T, T}, torch::kBool).triu(1), -1e30);
    outputs.push_back(torch::matmul(torch::softmax(scores, -1), vh));
  }
  const auto expected = torch::matmul(torch::cat(outputs, 1), attn->o_proj->weight.t());
  EXPECT_TRUE(close(attn(x)[0], expected, 1e-4));
}

TEST(Ffn, HourglassWithOneSubBlockEqualsConventional) {
  torch::manual_seed(4);
  FfnStack conventional(32, 80, 1, Family::llama, 1e-5);
  FfnStack hourglass(32, 80, 1, Family::llama, 1e-5);
  randomize(*conventional);
  {
    torch::NoGradGuard no_grad;
    auto src = conventional->named_parameters();
    for (auto& p : hourglass->named_parameters()) p.value().copy_(src[p.key()]);
  }
  const auto x = torch::randn({2, 3, 32});
  auto block = conventional->sub_blocks[0]->as<SwiGLUSubBlockImpl>();
  SwiGLUSubBlock b(std::dynamic_pointer_cast<SwiGLUSubBlockImpl>(conventional->sub_blocks->ptr(0)));
  const auto expected = x + swiglu(b, rms(x, block->norm->weight, 1e-5));
  EXPECT_TRUE(close(conventional(x), expected, 1e-5));
  EXPECT_TRUE(close(hourglass(x), expected, 1e-5));
}

// A SwiGLU sub-block's output, input and weight gradients against autograd of
// x + silu(N(x) W_g) * (N(x) W_u) W_d in double, in fp32 and in bf16 (whose results carry their own
// rounding), over more rows than one thread's share.
TEST(Ffn, SwiGLUGradientsMatchAutogradOfTheFormula) {
  torch::manual_seed(12);
  SwiGLUSubBlock block(32, 37, Family::llama, 1e-5);
  randomize(*block);
  const auto x = torch::randn({4, 300, 32});
  const auto upstream = torch::randn({4, 300, 32});
  std::vector<torch::Tensor> weights;  // norm, gate, up, down, in double
  for (const auto& w : {block->norm->weight, block->gate->weight, block->up->weight, block->down->weight}) {
    weights.push_back(w.detach().to(torch::kDouble).requires_grad_(true));
  }
  auto xr = x.to(torch::kDouble).requires_grad_(true);
  const auto n = rms(xr, weights[0], 1e-5);
  const auto product = torch::silu(torch::matmul(n, weights[1].t())) * torch::matmul(n, weights[2].t());
  const auto expected = xr + torch::matmul(product, weights[3].t());
  (expected * upstream.to(torch::kDouble)).sum().backward();
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    block->zero_grad();
    block->to(dtype);
    auto xi = x.to(dtype).detach().requires_grad_(true);
    const auto y = block(xi);
    (y.to(torch::kFloat) * upstream).sum().backward();
    const double tol = dtype == torch::kFloat ? 1e-5 : 3e-2;
    EXPECT_LT(relative_gap(y, expected.detach()), tol) << dtype;
    EXPECT_LT(relative_gap(xi.grad(), xr.grad()), tol) << dtype;
    const std::vector<torch::Tensor> grads{block->norm->weight.grad(), block->gate->weight.grad(),
                                           block->up->weight.grad(), block->down->weight.grad()};
    for (size_t i = 0; i < grads.size(); ++i) {
      EXPECT_LT(relative_gap(grads[i], weights[i].grad()), tol) << dtype << " " << i;
    }
    block->to(torch::kFloat);
  }
}

// The fused CPU product silu(g) * u (fp32) against the formula in double, value and both gradients:
// gates spanning the sigmoid's saturation (|g| up to 100), a length that is not a multiple of the
// vector width, and a transposed (non-contiguous) gate. A NaN stays in its own element.
TEST(Ffn, FusedSwiGLUMatchesFormulaWithGradient) {
  torch::manual_seed(21);
  auto gate = (torch::randn({37, 53}) * 4.0).t().contiguous().t();  // (37, 53) with column-major strides
  gate.index_put_({0, 0}, 100.0);
  gate.index_put_({0, 1}, -100.0);
  gate = gate.requires_grad_();
  const auto up = torch::randn({37, 53}).requires_grad_();
  const auto upstream = torch::randn({37, 53});
  const auto h = nn::swiglu(gate, up);
  (h * upstream).sum().backward();

  const auto gd = gate.detach().to(torch::kDouble).requires_grad_();
  const auto ud = up.detach().to(torch::kDouble).requires_grad_();
  const auto expected = gd * torch::sigmoid(gd) * ud;
  (expected * upstream.to(torch::kDouble)).sum().backward();
  EXPECT_LT(relative_gap(h, expected.detach()), 1e-6);
  EXPECT_LT(relative_gap(gate.grad(), gd.grad()), 1e-6);
  EXPECT_LT(relative_gap(up.grad(), ud.grad()), 1e-6);

  auto with_nan = torch::randn({40});
  with_nan.index_put_({7}, NAN);
  const auto out = nn::swiglu(with_nan, torch::ones({40}));
  EXPECT_TRUE(out[7].isnan().item<bool>());
  EXPECT_EQ(out.isnan().sum().item<int64_t>(), 1);
}

TEST(Ffn, StackAppliesResidualSubBlocksInOrder) {
  torch::manual_seed(5);
  for (auto family : {Family::llama, Family::olmo2}) {
    FfnStack stack(16, 6, 3, family, 1e-5);
    randomize(*stack);
    auto r = torch::randn({2, 4, 16});
    const auto out = stack(r);
    for (size_t i = 0; i < 3; ++i) {
      SwiGLUSubBlock b(std::dynamic_pointer_cast<SwiGLUSubBlockImpl>(stack->sub_blocks->ptr(i)));
      r = family == Family::llama ? r + swiglu(b, rms(r, b->norm->weight, 1e-5))
                                  : r + rms(swiglu(b, r), b->norm->weight, 1e-5);
    }
    EXPECT_TRUE(close(out, r, 1e-5)) << to_string(family);
  }
}

TEST(Block, LlamaAndOlmo2MatchTheirEquations) {
  torch::manual_seed(6);
  for (auto family : {Family::llama, Family::olmo2}) {
    const auto c = hourglass(family, 2, 12);
    TransformerBlock block(c, 0);
    randomize(*block);
    const auto x = torch::randn({2, 5, c.d_model});
    const auto w = block->attn_norm->weight;
    torch::Tensor h = family == Family::llama ? x + block->attn(rms(x, w, c.norm_eps))
                                              : x + rms(block->attn(x), w, c.norm_eps);
    for (size_t i = 0; i < 2; ++i) {
      SwiGLUSubBlock b(std::dynamic_pointer_cast<SwiGLUSubBlockImpl>(block->ffn->sub_blocks->ptr(i)));
      h = family == Family::llama ? h + swiglu(b, rms(h, b->norm->weight, c.norm_eps))
                                  : h + rms(swiglu(b, h), b->norm->weight, c.norm_eps);
    }
    EXPECT_TRUE(close(block(x), h, 1e-4)) << to_string(family);
  }
}

TEST(Model, ShapesAndTiedHead) {
  auto c = tiny();
  TransformerLM model(c);
  EXPECT_FALSE(model->lm_head);
  const auto idx = torch::randint(0, c.vocab_size, {3, 10}, torch::kLong);
  const auto logits = model(idx);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 10, c.vocab_size}));
  c.tie_embeddings = false;
  TransformerLM untied(c);
  EXPECT_TRUE(untied->lm_head);
  EXPECT_EQ(untied->num_parameters() - model->num_parameters(), c.vocab_size * c.d_model);
}

TEST(Model, IsCausal) {
  torch::manual_seed(7);
  for (auto c : {tiny(Family::llama), hourglass(Family::olmo2, 3, 8)}) {
    TransformerLM model(c);
    model->eval();
    auto idx = torch::randint(0, c.vocab_size, {2, 12}, torch::kLong);
    const auto before = model(idx);
    auto changed = idx.clone();
    changed.narrow(1, 7, 5).random_(0, c.vocab_size);
    const auto after = model(changed);
    EXPECT_TRUE(close(before.narrow(1, 0, 7), after.narrow(1, 0, 7), 1e-5));
    EXPECT_FALSE(close(before.narrow(1, 7, 5), after.narrow(1, 7, 5), 1e-5));
  }
}

TEST(Model, LossIsFp32CrossEntropyPlusZLoss) {
  torch::manual_seed(8);
  auto c = tiny(Family::olmo2);
  c.z_loss = 1e-2;
  TransformerLM model(c);
  const auto idx = torch::randint(0, c.vocab_size, {2, 6}, torch::kLong);
  auto targets = torch::randint(0, c.vocab_size, {2, 6}, torch::kLong);
  targets[0][3] = -1;  // ignored
  const auto out = model->forward_with_loss(idx, targets);
  const auto logits = out.logits.view({-1, c.vocab_size}).to(torch::kDouble);
  const auto t = targets.view({-1});
  const auto keep = t.ne(-1);
  const auto logp = torch::log_softmax(logits, -1);
  const auto picked = logp.index({keep}).gather(1, t.index({keep}).unsqueeze(1));
  const double ce = -picked.mean().item<double>();
  const double z = 1e-2 * torch::logsumexp(logits.index({keep}), -1).pow(2).mean().item<double>();
  EXPECT_EQ(out.loss.scalar_type(), torch::kFloat);
  EXPECT_NEAR(out.ce_loss.item<double>(), ce, 1e-5);
  EXPECT_NEAR(out.z_loss.item<double>(), z, 1e-6);
  EXPECT_NEAR(out.loss.item<double>(), ce + z, 1e-5);
  // A fresh model predicts close to uniform: loss near log(vocab).
  EXPECT_NEAR(ce, std::log(97.0), 0.5);
}

// The loss's gradient reaching the logits (one fused node on the CPU) against autograd of the
// formula in double, with z-loss and ignored rows; 97 columns: vector body and scalar tail. Then the
// edges: a NaN logit makes the loss NaN, a target outside the vocabulary is an error that names it.
TEST(Model, LossGradientMatchesAutogradOfTheFormula) {
  torch::manual_seed(13);
  auto c = tiny();
  c.z_loss = 1e-2;
  TransformerLM model(c);
  const auto idx = torch::randint(0, c.vocab_size, {3, 16}, torch::kLong);
  auto targets = torch::randint(0, c.vocab_size, {3, 16}, torch::kLong);
  targets.narrow(1, 4, 3).fill_(-1);
  auto out = model->forward_with_loss(idx, targets);
  out.logits.retain_grad();
  (out.loss * 3.0).backward();
  auto logits = out.logits.detach().view({-1, c.vocab_size}).to(torch::kDouble).requires_grad_(true);
  const auto t = targets.view({-1});
  const auto keep = t.ne(-1);
  const auto lse = torch::logsumexp(logits.index({keep}), -1);
  const auto picked = logits.index({keep}).gather(1, t.index({keep}).unsqueeze(1)).squeeze(1);
  const auto reference = (lse - picked).mean() + 1e-2 * lse.pow(2).mean();
  (reference * 3.0).backward();
  EXPECT_NEAR(out.loss.item<double>(), reference.item<double>(), 1e-6);
  const auto grad = out.logits.grad().view({-1, c.vocab_size}).to(torch::kDouble);
  EXPECT_LT((grad - logits.grad()).abs().max().item<double>(), 1e-7);
  EXPECT_EQ(grad.index({t.eq(-1)}).abs().max().item<double>(), 0.0);  // ignored rows get none

  {
    torch::NoGradGuard no_grad;
    model->norm->weight[0] = std::numeric_limits<float>::quiet_NaN();
  }
  EXPECT_TRUE(std::isnan(model->forward_with_loss(idx, targets).loss.item<double>()));
  targets[0][0] = c.vocab_size;
  try {
    model->forward_with_loss(idx, targets);
    ADD_FAILURE() << "a target outside the vocabulary was accepted";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find("target 97 is outside the vocabulary [0, 97)"),
              std::string::npos) << e.what_without_backtrace();
  }
}

TEST(Model, EveryParameterReceivesAGradient) {
  torch::manual_seed(9);
  auto gqa = tiny();
  gqa.n_kv_heads = 2;
  gqa.qk_norm = true;
  gqa.tie_embeddings = false;
  auto widths = hourglass(Family::olmo2, 2, 8);
  widths.ffn.widths = {8, 24};
  for (const auto& c : {tiny(), gqa, widths, hourglass(Family::llama, 4, 8)}) {
    TransformerLM model(c);
    const auto idx = torch::randint(0, c.vocab_size, {2, 8}, torch::kLong);
    model->forward_with_loss(idx, torch::randint(0, c.vocab_size, {2, 8}, torch::kLong)).loss.backward();
    for (const auto& p : model->named_parameters()) {
      ASSERT_TRUE(p.value().grad().defined()) << p.key();
      EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
      EXPECT_TRUE(torch::isfinite(p.value().grad()).all().item<bool>()) << p.key();
    }
  }
}

TEST(Model, AnalyticCountEqualsModuleCountPerCategory) {
  std::vector<ModelConfig> grid;
  for (auto family : {Family::llama, Family::olmo2}) {
    for (int64_t k : {1, 2, 4}) {
      for (bool tied : {true, false}) {
        for (bool qk : {false, true}) {
          for (int64_t kv : {4, 2, 1}) {
            auto c = k == 1 ? tiny(family) : hourglass(family, k, 12);
            c.tie_embeddings = tied;
            c.qk_norm = qk;
            c.n_kv_heads = kv;
            if (kv == 1) c.head_dim = 10;  // attention width 40 != d_model 32
            if (k == 2) c.ffn.widths = {8, 20};
            grid.push_back(c);
          }
        }
      }
    }
  }
  for (const auto& c : grid) {
    TransformerLM model(c);
    ParamCount built;
    for (const auto& p : model->named_parameters()) {
      const auto& name = p.key();
      const int64_t n = p.value().numel();
      if (p.value().dim() == 1) built.norm += n;
      else if (name.rfind("tok_embeddings", 0) == 0) built.embedding += n;
      else if (name.rfind("lm_head", 0) == 0) built.head += n;
      else if (name.find(".attn.") != std::string::npos) built.attention += n;
      else if (name.find(".ffn.") != std::string::npos) built.ffn += n;
      else ADD_FAILURE() << "uncategorised parameter " << name;
    }
    const auto analytic = count_parameters(c);
    EXPECT_EQ(analytic.embedding, built.embedding);
    EXPECT_EQ(analytic.attention, built.attention);
    EXPECT_EQ(analytic.ffn, built.ffn);
    EXPECT_EQ(analytic.norm, built.norm);
    EXPECT_EQ(analytic.head, built.head);
    EXPECT_EQ(analytic.total(), model->num_parameters());
  }
}

TEST(Model, InitialisationFollowsConfig) {
  torch::manual_seed(10);
  auto c = tiny();
  c.d_model = 256;
  c.n_heads = 4;
  c.ffn.hidden = 512;
  c.n_layers = 8;
  c.init.depth_scaled = true;
  TransformerLM normal(c);
  const auto& q = normal->blocks[0]->as<TransformerBlockImpl>()->attn->q_proj->weight;
  const auto& o = normal->blocks[0]->as<TransformerBlockImpl>()->attn->o_proj->weight;
  EXPECT_NEAR(q.std().item<double>(), 0.02, 0.001);
  EXPECT_NEAR(o.std().item<double>(), 0.02 / std::sqrt(16.0), 0.0005);
  EXPECT_GT(q.abs().max().item<double>(), 3 * 0.02);  // a plain normal has tails past 3 sigma
  EXPECT_TRUE((normal->norm->weight == 1).all().item<bool>());

  c.init.dist = InitDist::truncated_normal;
  c.init.depth_scaled = false;
  TransformerLM truncated(c);
  const auto& w = truncated->tok_embeddings->weight;
  EXPECT_LE(w.abs().max().item<double>(), 3 * 0.02 + 1e-7);
  // The std of N(0, s^2) truncated at 3 s is 0.98658 s.
  EXPECT_NEAR(w.std().item<double>(), 0.98658 * 0.02, 0.0004);
}

// Logits computed a chunk at a time through the cache equal those of one pass over the sequence,
// for both families, GQA with QK-norm, and hourglass stacks.
TEST(KvCache, ChunkedDecodingEqualsTheFullForwardPass) {
  auto gqa = tiny(Family::olmo2);
  gqa.n_kv_heads = 2;
  for (const auto& config : {tiny(Family::llama), gqa, hourglass(Family::llama, 3, 12)}) {
    torch::manual_seed(3);
    TransformerLM model(config);
    randomize(*model);
    model->eval();
    torch::NoGradGuard no_grad;
    const auto idx = torch::randint(config.vocab_size, {2, 12});
    const auto full = model->forward(idx);
    KvCache cache;
    int64_t at = 0;
    for (int64_t chunk : {5, 1, 1, 3, 2}) {
      const auto logits = model->forward_cached(idx.narrow(1, at, chunk), cache);
      EXPECT_TRUE(close(logits, full.narrow(1, at, chunk), 1e-4))  // logits up to ~6: float rounding
          << "positions " << at << ".." << at + chunk - 1 << ": max difference "
          << (logits - full.narrow(1, at, chunk)).abs().max().item<double>() << " of " << full.abs().max().item<double>();
      at += chunk;
      EXPECT_EQ(cache.length(), at);
    }
  }
}

// last_only: the last position's logits of the same pass, and the same cache for what follows.
TEST(KvCache, LastOnlyGivesTheLastPositionAndTheSameCache) {
  torch::manual_seed(5);
  TransformerLM model(tiny(Family::olmo2));
  randomize(*model);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto idx = torch::randint(97, {2, 9});
  KvCache whole, last;
  const auto full = model->forward_cached(idx.narrow(1, 0, 7), whole);
  const auto tail = model->forward_cached(idx.narrow(1, 0, 7), last, /*last_only=*/true);
  ASSERT_EQ(tail.sizes(), (std::vector<int64_t>{2, 1, 97}));
  EXPECT_TRUE(close(tail, full.narrow(1, 6, 1), 1e-5));  // one head row instead of seven: rounding only
  EXPECT_EQ(last.length(), 7);
  EXPECT_TRUE(close(model->forward_cached(idx.narrow(1, 7, 2), last, true),
                    model->forward_cached(idx.narrow(1, 7, 2), whole).narrow(1, 1, 1), 1e-5));
}

TEST(Generation, SamplingFiltersFollowTheirDefinitions) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(1);
  const auto logits = torch::tensor({1.0, 3.0, 2.0, 2.9, -1.0});
  SamplingOptions greedy;
  EXPECT_EQ(sample_token(logits, greedy, generator), 1);
  SamplingOptions top1;
  top1.temperature = 1.0;
  top1.top_k = 1;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sample_token(logits, top1, generator), 1);
  // Top-k 2 keeps tokens 1 and 3; a tiny top-p keeps the most likely token alone.
  SamplingOptions top2 = top1;
  top2.top_k = 2;
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(sample_token(logits, top2, generator));
  EXPECT_EQ(seen, (std::set<int64_t>{1, 3}));
  SamplingOptions nucleus;
  nucleus.temperature = 1.0;
  nucleus.top_p = 0.01;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sample_token(logits, nucleus, generator), 1);
  // Softmax of the logits is about (.05, .39, .14, .36, .01): top-p 0.6 keeps tokens 1 and 3 only.
  nucleus.top_p = 0.6;
  seen.clear();
  for (int i = 0; i < 300; ++i) seen.insert(sample_token(logits, nucleus, generator));
  EXPECT_EQ(seen, (std::set<int64_t>{1, 3}));
}

TEST(Generation, CachedEqualsUncachedAndSeedsRepeat) {
  auto config = tiny(Family::llama);
  config.max_seq_len = 32;
  torch::manual_seed(5);
  TransformerLM model(config);
  randomize(*model);
  const std::vector<int64_t> prompt = {5, 17, 42, 3};
  for (double temperature : {0.0, 1.0}) {
    SamplingOptions options;
    options.max_tokens = 20;
    options.temperature = temperature;
    options.top_k = temperature > 0 ? 20 : 0;
    options.top_p = temperature > 0 ? 0.95 : 1.0;
    options.seed = 7;
    const auto cached = generate(model, prompt, options);
    options.use_cache = false;
    const auto uncached = generate(model, prompt, options);
    EXPECT_EQ(cached, uncached) << "temperature " << temperature;
    EXPECT_EQ(cached.size(), 20u);
    options.use_cache = true;
    EXPECT_EQ(generate(model, prompt, options), cached) << "same seed, same tokens";
    if (temperature > 0) {
      options.seed = 8;
      EXPECT_NE(generate(model, prompt, options), cached) << "another seed, other tokens";
    }
  }
  SamplingOptions stop;
  stop.max_tokens = 20;
  const auto greedy = generate(model, prompt, stop);
  stop.stop_token = greedy[3];
  const auto stopped = generate(model, prompt, stop);
  EXPECT_EQ(stopped.back(), greedy[3]);
  EXPECT_LE(stopped.size(), 4u);
  stop.max_tokens = 29;  // 4 + 29 > 32
  EXPECT_THROW(generate(model, prompt, stop), std::invalid_argument);
}
