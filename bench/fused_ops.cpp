// bench_fused_ops: the training step's fused CPU nodes against the ATen operators they replace,
// forward and backward, fp32 and (loss, SwiGLU, attention) bf16, as under autocast:
// - the loss (src/nn/fused_ops.h: cross-entropy + z-loss in one node) against the composite formula,
//   on the logits of configs/demo/conventional.yaml at batch 8 x 256 (2048 x 4096) and of a 32k
//   vocabulary (512 x 32768); in bf16 the composite side converts the logits to fp32 first, as the
//   trainer did before the node took bf16;
// - RMSNorm (fused_ops.h) against its composite formula, at the demo models' widths;
// - SwiGLU's product silu(gate) * up (fused_ops.h) against the two ATen operators, at the demo FFNs' widths;
// - causal attention (src/nn/causal_attention_cpu.h) against at::scaled_dot_product_attention (the
//   CPU flash kernel), on the heads of the demo configs at batch 8 x 256 and of longer sequences.
// Both sides run in one process with the trainer's host-memory setting; best of --repeats timings of
// --iters calls each.
//
//   bench_fused_ops [--threads N] [--iters 10] [--repeats 5]
//
// Prints a Markdown table: ms per forward + backward, ATen / fused ratio, and the largest
// difference between the two sides' gradients (relative to the largest gradient).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "../src/nn/causal_attention_cpu.h"
#include "../src/nn/fused_ops.h"
#include "ffnshape/compat.h"
#include "ffnshape/train/host_allocator.h"

namespace {

struct Args {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  int iters = 10;
  int repeats = 5;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: %s needs a value (see the header of bench/fused_ops.cpp)\n", flag.c_str());
      std::exit(2);
    }
    const int value = std::atoi(argv[++i]);
    if (flag == "--threads") a.threads = value;
    else if (flag == "--iters") a.iters = value;
    else if (flag == "--repeats") a.repeats = value;
    else {
      std::fprintf(stderr, "error: unknown option %s (use --threads, --iters, --repeats)\n", flag.c_str());
      std::exit(2);
    }
  }
  return a;
}

double best_ms(const Args& a, const std::function<void()>& fn) {
  fn();
  double best = 1e30;
  for (int r = 0; r < a.repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < a.iters; ++i) fn();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return best / a.iters;
}

double relative_gap(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max() / b.to(torch::kDouble).abs().max()).item<double>();
}

// Gradients w.r.t. the inputs of one forward + backward; inputs are fresh leaves each call.
template <typename Fn>
std::vector<torch::Tensor> gradients(const std::vector<torch::Tensor>& inputs, const Fn& fn) {
  std::vector<torch::Tensor> leaves;
  for (const auto& t : inputs) leaves.push_back(t.detach().requires_grad_(true));
  fn(leaves);
  std::vector<torch::Tensor> grads;
  for (const auto& t : leaves) grads.push_back(t.grad());
  return grads;
}

template <typename Composite, typename Fused>
void row(const Args& a, const char* name, const std::vector<torch::Tensor>& inputs, const Composite& composite,
         const Fused& fused) {
  const auto expected = gradients(inputs, composite);
  const auto got = gradients(inputs, fused);
  double gap = 0;
  for (size_t i = 0; i < got.size(); ++i) gap = std::max(gap, relative_gap(got[i], expected[i]));
  const double composite_ms = best_ms(a, [&] { gradients(inputs, composite); });
  const double fused_ms = best_ms(a, [&] { gradients(inputs, fused); });
  std::printf("| %s | %.3f | %.3f | %.2f | %.1e |\n", name, composite_ms, fused_ms, composite_ms / fused_ms, gap);
}

const char* dtype_name(torch::ScalarType dtype) { return dtype == torch::kBFloat16 ? "bf16" : "fp32"; }

}  // namespace

int main(int argc, char** argv) {
  const auto a = parse(argc, argv);
  torch::set_num_threads(a.threads);
  ffnshape::keep_host_memory_mapped();  // as train() does
  torch::manual_seed(0);
  std::printf("cpu, %d threads, best of %d x %d calls, forward + backward\n\n", a.threads, a.repeats, a.iters);
  std::printf("| node | ATen ms | fused ms | ATen / fused | gradient gap |\n|---|---:|---:|---:|---:|\n");

  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    for (const auto& [rows, vocab] : {std::pair<int64_t, int64_t>{2048, 4096}, {512, 32768}}) {
      const auto targets = torch::randint(0, vocab, {rows}, torch::kLong);
      const std::vector<torch::Tensor> logits{(torch::randn({rows, vocab}) * 2.0).to(dtype)};
      const auto name = "loss " + std::to_string(rows) + "x" + std::to_string(vocab) + " " + dtype_name(dtype) +
                        ", z-loss 1e-4";
      row(a, name.c_str(), logits,
          [&](std::vector<torch::Tensor>& t) {
            const auto x = t[0].to(torch::kFloat);
            const auto ce = torch::nn::functional::cross_entropy(x, targets);
            (ce + 1e-4 * torch::logsumexp(x, -1).pow(2).mean()).backward();
          },
          [&](std::vector<torch::Tensor>& t) {
            const auto terms = ffnshape::nn::cross_entropy_with_z_loss(t[0], targets, -100, 1e-4);
            (terms.cross_entropy + terms.z_loss).backward();
          });
    }
  }
  // RMSNorm on the residual stream of conventional.yaml (256) and hourglass.yaml (347), batch 8 x 256.
  for (const int64_t width : {256, 347}) {
    const std::vector<torch::Tensor> x_weight{torch::randn({2048, width}), torch::rand({width}) + 0.5};
    const auto upstream = torch::randn({2048, width});
    const auto name = "rms_norm 2048x" + std::to_string(width) + " fp32";
    row(a, name.c_str(), x_weight,
        [&](std::vector<torch::Tensor>& t) {
          ((t[0] * torch::rsqrt(t[0].pow(2).mean(-1, true) + 1e-5) * t[1]) * upstream).sum().backward();
        },
        [&](std::vector<torch::Tensor>& t) {
          (ffnshape::nn::rms_norm_cpu(t[0], t[1], 1e-5) * upstream).sum().backward();
        });
  }
  // SwiGLU's product at the FFN widths of conventional.yaml (704) and hourglass.yaml (116), batch 8 x 256.
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    for (const int64_t hidden : {704, 116}) {
      const std::vector<torch::Tensor> gate_up{(torch::randn({2048, hidden}) * 3.0).to(dtype),
                                               torch::randn({2048, hidden}).to(dtype)};
      const auto upstream = torch::randn({2048, hidden}).to(dtype);
      const auto name = "swiglu 2048x" + std::to_string(hidden) + " " + dtype_name(dtype);
      row(a, name.c_str(), gate_up,
          [&](std::vector<torch::Tensor>& t) { (torch::silu(t[0]) * t[1] * upstream).sum().backward(); },
          [&](std::vector<torch::Tensor>& t) { (ffnshape::nn::swiglu(t[0], t[1]) * upstream).sum().backward(); });
    }
  }
  // (batch, heads, seq, head_dim): conventional.yaml and hourglass.yaml at batch 8, then longer sequences.
  for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
    for (const auto& shape : std::vector<std::vector<int64_t>>{{8, 4, 256, 64}, {8, 4, 256, 68}, {4, 4, 512, 64}}) {
      const std::vector<torch::Tensor> qkv{torch::randn(shape).to(dtype), torch::randn(shape).to(dtype),
                                           torch::randn(shape).to(dtype)};
      const auto upstream = torch::randn(shape).to(dtype);
      const auto name = "attention " + c10::str(shape) + " " + dtype_name(dtype) + ", causal";
      if (!ffnshape::nn::uses_cpu_attention_node(qkv[0], qkv[1], qkv[2])) {
        std::printf("| %s: outside the CPU node's range here |\n", name.c_str());
        continue;
      }
      row(a, name.c_str(), qkv,
          [&](std::vector<torch::Tensor>& t) {
            (ffnshape::compat::causal_attention(t[0], t[1], t[2]) * upstream).sum().backward();
          },
          [&](std::vector<torch::Tensor>& t) {
            (ffnshape::nn::causal_attention(t[0], t[1], t[2]) * upstream).sum().backward();
          });
    }
  }
  return 0;
}
