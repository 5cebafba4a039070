#include "ffnshape/nn/generation.h"

#include <stdexcept>
#include <string>

namespace ffnshape::nn {

int64_t sample_token(const torch::Tensor& logits, const SamplingOptions& options, torch::Generator& generator) {
  auto scores = logits.to(torch::kFloat).reshape(-1);
  if (options.temperature <= 0) return scores.argmax().item<int64_t>();
  scores = scores / options.temperature;
  if (options.top_k > 0 && options.top_k < scores.numel()) {
    const auto kth = std::get<0>(scores.topk(options.top_k)).min();
    scores = scores.masked_fill(scores < kth, -std::numeric_limits<float>::infinity());
  }
  if (options.top_p < 1) {
    // Keep the most likely tokens up to and including the one that brings the sum to top_p.
    const auto [sorted, order] = scores.sort(/*dim=*/-1, /*descending=*/true);
    const auto cumulative = sorted.softmax(-1).cumsum(-1);
    const auto drop_sorted = (cumulative - sorted.softmax(-1)) >= options.top_p;
    const auto drop = torch::zeros_like(drop_sorted).scatter(0, order, drop_sorted);
    scores = scores.masked_fill(drop, -std::numeric_limits<float>::infinity());
  }
  const auto probabilities = scores.softmax(-1).cpu();
  return torch::multinomial(probabilities, 1, /*replacement=*/false, generator).item<int64_t>();
}

std::vector<int64_t> generate(TransformerLM& model, const std::vector<int64_t>& prompt, const SamplingOptions& options) {
  if (prompt.empty()) throw std::invalid_argument("the prompt is empty: give at least one token");
  const int64_t limit = model->config().max_seq_len;
  if (static_cast<int64_t>(prompt.size()) + options.max_tokens > limit) {
    throw std::invalid_argument("the prompt (" + std::to_string(prompt.size()) + " tokens) plus max_tokens (" +
                                std::to_string(options.max_tokens) + ") exceeds model.max_seq_len " +
                                std::to_string(limit) + "\n  fix: shorten the prompt or lower --max-tokens");
  }
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const auto device = model->tok_embeddings->weight.device();
  auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  std::vector<int64_t> sequence = prompt, generated;
  KvCache cache;
  auto as_input = [&](const std::vector<int64_t>& ids) {
    return torch::tensor(ids, torch::kLong).to(device).unsqueeze(0);
  };
  // With the cache, the prompt goes in once and then one token per step.
  auto forward = [&](const std::vector<int64_t>& ids) {
    return options.use_cache ? model->forward_cached(as_input(ids), cache, /*last_only=*/true)
                             : model->forward(as_input(sequence));
  };
  torch::Tensor logits = forward(sequence);
  while (static_cast<int64_t>(generated.size()) < options.max_tokens) {
    const auto next = sample_token(logits[0][-1], options, generator);
    generated.push_back(next);
    sequence.push_back(next);
    if (options.stop_token && next == *options.stop_token) break;
    if (static_cast<int64_t>(generated.size()) == options.max_tokens) break;
    logits = forward({next});
  }
  model->train(was_training);
  return generated;
}

}  // namespace ffnshape::nn
