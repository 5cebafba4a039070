// A tiny language model assembled from ffnshape's building blocks by a program outside the project:
//
//   tokens -> embedding -> x + Attn(RMSNorm(x)) -> hourglass FFN stack (K = 3, hidden < d_model)
//          -> RMSNorm -> tied LM head
//
// It checks that the installed package links and trains: forward and backward on random tokens, a few
// AdamW steps on one fixed batch (the loss must fall), and a parameter count that must equal both the
// formula written out below and ffnshape::count_parameters for the same shape.
#include <ffnshape/config/model_config.h>
#include <ffnshape/nn/attention.h>
#include <ffnshape/nn/ffn.h>
#include <ffnshape/nn/rms_norm.h>
#include <ffnshape/params/count.h>
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <exception>

namespace {

// The shape: one layer, grouped-query attention (4 query heads sharing 2 key/value heads), and an
// hourglass FFN of three residual SwiGLU sub-blocks, each 64 -> 32 -> 64.
ffnshape::ModelConfig tiny_config() {
  auto config = ffnshape::ModelConfig::defaults_for(ffnshape::Family::llama);
  config.vocab_size = 97;
  config.d_model = 64;
  config.n_layers = 1;
  config.n_heads = 4;
  config.n_kv_heads = 2;
  config.head_dim = 16;
  config.max_seq_len = 32;
  config.tie_embeddings = true;
  config.ffn.kind = ffnshape::FfnKind::hourglass;
  config.ffn.k = 3;
  config.ffn.hidden = 32;
  return config;
}

class MyModelImpl : public torch::nn::Module {
 public:
  explicit MyModelImpl(const ffnshape::ModelConfig& c) {
    // Every submodule goes through register_module, so parameters() and the optimizer see it.
    embedding = register_module("embedding", torch::nn::Embedding(c.vocab_size, c.d_model));
    attn_norm = register_module("attn_norm", ffnshape::nn::RMSNorm(c.d_model, c.norm_eps));
    attn = register_module("attn", ffnshape::nn::CausalSelfAttention(c));
    ffn = register_module("ffn", ffnshape::nn::FfnStack(c.d_model, *c.ffn.hidden, c.ffn.k, c.family, c.norm_eps));
    norm = register_module("norm", ffnshape::nn::RMSNorm(c.d_model, c.norm_eps));
    // Small embeddings keep the tied head's first logits near zero (loss near log(vocab)).
    torch::NoGradGuard no_grad;
    embedding->weight.normal_(0.0, 0.02);
  }

  // idx: (batch, seq) token ids -> (batch, seq, vocab) logits.
  torch::Tensor forward(const torch::Tensor& idx) {
    auto x = embedding(idx);
    x = x + attn(attn_norm(x));  // pre-norm attention with its residual
    x = ffn(x);                  // the stack adds its own residuals
    return torch::nn::functional::linear(norm(x), embedding->weight);  // tied head
  }

  torch::nn::Embedding embedding{nullptr};
  ffnshape::nn::RMSNorm attn_norm{nullptr}, norm{nullptr};
  ffnshape::nn::CausalSelfAttention attn{nullptr};
  ffnshape::nn::FfnStack ffn{nullptr};
};
TORCH_MODULE(MyModel);

// The parameter count written out by hand (no biases anywhere).
int64_t expected_parameters(const ffnshape::ModelConfig& c) {
  const int64_t d = c.d_model, h = *c.ffn.hidden, k = c.ffn.k;
  const int64_t q = c.q_width(), kv = c.kv_width();  // 64 and 32 here
  const int64_t embedding = c.vocab_size * d;        // also the head (tied)
  const int64_t attention = d * q + 2 * d * kv + q * d;  // q, k, v, o projections
  const int64_t ffn = k * (3 * d * h + d);               // gate, up, down and a norm per sub-block
  const int64_t norms = 2 * d;                           // attention norm and final norm
  return embedding + attention + ffn + norms;
}

int64_t count_module_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

int run() {
  torch::manual_seed(0);
  const auto config = tiny_config();
  ffnshape::validate(config);  // throws a ConfigError if the shape is inconsistent

  MyModel model(config);
  const int64_t params = count_module_parameters(*model);
  const int64_t expected = expected_parameters(config);
  const int64_t library = ffnshape::count_parameters(config).total();
  if (params != expected || params != library) {
    std::fprintf(stderr, "custom_block FAILED: module has %lld parameters, formula says %lld, count_parameters says %lld\n",
                 static_cast<long long>(params), static_cast<long long>(expected), static_cast<long long>(library));
    return 1;
  }

  // One fixed batch of random tokens; the targets are the inputs shifted by one position.
  const int64_t batch = 4, seq = 16;
  const auto tokens = torch::randint(config.vocab_size, {batch, seq + 1}, torch::kLong);
  const auto inputs = tokens.slice(1, 0, seq), targets = tokens.slice(1, 1, seq + 1);
  auto loss_of = [&] {
    const auto logits = model(inputs);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, config.vocab_size}), targets.reshape({-1}));
  };

  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2).weight_decay(0.0));
  double loss_first = 0, loss_last = 0;
  const int steps = 20;
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    auto loss = loss_of();
    loss.backward();
    optimizer.step();
    if (step == 0) loss_first = loss.item<double>();
  }
  {
    torch::NoGradGuard no_grad;
    loss_last = loss_of().item<double>();
  }

  if (!(loss_last < loss_first)) {
    std::fprintf(stderr, "custom_block FAILED: loss did not fall (first %.4f, last %.4f)\n", loss_first, loss_last);
    return 1;
  }
  std::printf("custom_block ok: params=%lld loss_first=%.4f loss_last=%.4f\n", static_cast<long long>(params),
              loss_first, loss_last);
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "custom_block FAILED: %s\n", e.what());
    return 1;
  }
}
