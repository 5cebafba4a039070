// bench_generate_speed: greedy decoding speed of a run's model through nn::generate, the code path of
// `ffnshape generate` (KV cache, one token per step after the prompt). bench/generate_speed.sh runs it
// beside transformers' generate (and llama-cpp-python where installed) on the same prompt ids.
//
//   bench_generate_speed RUN --prompt-tokens 1,2,3 [--new-tokens 128] [--repeats 3] [--threads N]
//
// Two timings per repeat: generate with max_tokens 1 (the prompt's forward pass and the first token:
// "prefill") and with max_tokens N. Decoding speed is (N - 1) / (t_N - t_1), so model loading, the
// prompt and the first token do not count in it. No stop token: every run makes exactly N tokens.
// Prints one JSON object: the medians over repeats and the generated ids (the Python side compares them).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ffnshape/nn/generation.h"
#include "ffnshape/train/checkpoint.h"

namespace {

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "error: " << problem << "\n"
            << "usage: bench_generate_speed RUN --prompt-tokens 1,2,3 [--new-tokens 128] [--repeats 3] [--threads N]\n";
  std::exit(2);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) ids.push_back(std::stoll(item));
  return ids;
}

// Seconds for one generate call, and its tokens.
double timed_generate(ffnshape::nn::TransformerLM& model, const std::vector<int64_t>& prompt, int64_t tokens,
                      std::vector<int64_t>* out) {
  ffnshape::nn::SamplingOptions options;
  options.max_tokens = tokens;
  const auto start = std::chrono::steady_clock::now();
  auto generated = ffnshape::nn::generate(model, prompt, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (out) *out = std::move(generated);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::string run, prompt_text;
  int64_t new_tokens = 128, repeats = 3, threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      run = arg;
      continue;
    }
    if (i + 1 >= argc) usage("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--prompt-tokens") prompt_text = value;
    else if (arg == "--new-tokens") new_tokens = std::max<int64_t>(2, std::stoll(value));
    else if (arg == "--repeats") repeats = std::max<int64_t>(1, std::stoll(value));
    else if (arg == "--threads") threads = std::stoll(value);
    else usage("unknown option " + arg);
  }
  if (run.empty()) usage("no run directory given");
  if (prompt_text.empty()) usage("no --prompt-tokens given");
  if (threads > 0) torch::set_num_threads(static_cast<int>(threads));
  try {
    const auto prompt = parse_ids(prompt_text);
    auto trained = ffnshape::load_trained_model(run);
    std::vector<int64_t> tokens;
    timed_generate(trained.model, prompt, 4, nullptr);  // warm-up: first-touch allocations, thread pool
    std::vector<double> prefill_s, total_s;
    for (int64_t r = 0; r < repeats; ++r) {
      prefill_s.push_back(timed_generate(trained.model, prompt, 1, nullptr));
      total_s.push_back(timed_generate(trained.model, prompt, new_tokens, &tokens));
    }
    const double prefill = median(prefill_s), total = median(total_s);
    std::printf("{\"prompt_tokens\": %zu, \"new_tokens\": %lld, \"threads\": %d, \"prefill_s\": %.5f, "
                "\"total_s\": %.5f, \"decode_tokens_per_s\": %.3f, \"tokens\": [",
                prompt.size(), static_cast<long long>(new_tokens), torch::get_num_threads(), prefill, total,
                static_cast<double>(new_tokens - 1) / (total - prefill));
    for (size_t i = 0; i < tokens.size(); ++i) std::printf("%s%lld", i ? ", " : "", static_cast<long long>(tokens[i]));
    std::printf("]}\n");
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
