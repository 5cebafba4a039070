// The model side of profiling: one forward pass that keeps the clouds, and validation losses with
// one or more layers' FFN updates perturbed.
#include "../common/log.h"

#include <cmath>
#include <random>

#include "ffnshape/config/config_error.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/host_allocator.h"
#include "ffnshape/train/loader.h"
#include "ffnshape/train/trainer.h"
#include "ffnshape/profile/work_profiler.h"
#include "model_passes.h"

namespace ffnshape::profile {

std::string Perturbation::name() const {
  if (kind == Kind::ablate) return "ablate";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%s:%g", kind == Kind::scale ? "scale" : "noise", strength);
  return buffer;
}

Perturbation parse_perturbation(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  Perturbation p;
  if (kind == "ablate" && colon == std::string::npos) return p;
  if ((kind == "scale" || kind == "noise") && colon != std::string::npos) {
    try {
      size_t used = 0;
      const auto value_text = text.substr(colon + 1);
      p.strength = std::stod(value_text, &used);
      if (used == value_text.size() && std::isfinite(p.strength) && (kind == "scale" || p.strength > 0)) {
        p.kind = kind == "scale" ? Perturbation::Kind::scale : Perturbation::Kind::noise;
        return p;
      }
    } catch (const std::exception&) {
    }
  }
  throw ConfigError("--perturb", "'" + text + "' is not a perturbation",
                    "use ablate, scale:S (the FFN update times S, e.g. scale:0.5) or noise:S (S > 0, e.g. noise:0.1)");
}

namespace {

// The sampled positions: a seeded partial Fisher-Yates draw, identical on every platform.
torch::Tensor sample_positions(int64_t available, int64_t tokens, uint64_t seed) {
  std::vector<int64_t> index(static_cast<size_t>(available));
  for (int64_t i = 0; i < available; ++i) index[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < tokens; ++i) {
    const auto j = i + static_cast<int64_t>(rng() % static_cast<uint64_t>(available - i));
    std::swap(index[static_cast<size_t>(i)], index[static_cast<size_t>(j)]);
  }
  index.resize(static_cast<size_t>(tokens));
  return torch::tensor(index, torch::kLong);
}

}  // namespace

LayerClouds capture_clouds(nn::TransformerLM& model, const torch::Tensor& windows, int64_t tokens, uint64_t seed) {
  const int64_t available = windows.numel();
  if (tokens < 3 || tokens > available) {
    throw ConfigError("--tokens", "is " + std::to_string(tokens) + ", but the validation windows hold " +
                                      std::to_string(available) + " tokens (and a cloud needs at least 3)",
                      "choose --tokens between 3 and " + std::to_string(available) + ", or give more validation data");
  }
  torch::NoGradGuard no_grad;
  const auto device = model->tok_embeddings->weight.device();
  const auto positions = sample_positions(available, tokens, seed).to(device);
  LayerClouds clouds;
  auto keep = [&](const torch::Tensor& h) {
    return h.reshape({-1, h.size(-1)}).index_select(0, positions).to(torch::kCPU, torch::kFloat).contiguous();
  };
  auto x = model->tok_embeddings(windows.to(device));
  for (const auto& module : *model->blocks) {
    auto block = module->as<nn::TransformerBlock>();
    const auto h = block->attend(x);
    x = block->ffn(h);
    clouds.x.push_back(keep(h));
    clouds.y.push_back(keep(x));
  }
  return clouds;
}

double perturbed_loss(nn::TransformerLM& model, const std::vector<std::pair<torch::Tensor, torch::Tensor>>& batches,
                      const std::vector<int64_t>& layers, const Perturbation& perturbation, uint64_t seed) {
  torch::NoGradGuard no_grad;
  const auto device = model->tok_embeddings->weight.device();
  torch::manual_seed(seed);  // the noise is the same draw for every call with the same layers
  double total = 0;
  int64_t counted = 0;
  for (const auto& [inputs, targets] : batches) {
    auto x = model->tok_embeddings(inputs.to(device));
    int64_t l = 0;
    for (const auto& module : *model->blocks) {
      auto block = module->as<nn::TransformerBlock>();
      const auto h = block->attend(x);
      x = block->ffn(h);
      if (std::find(layers.begin(), layers.end(), l) != layers.end()) {
        const auto delta = x - h;
        switch (perturbation.kind) {
          case Perturbation::Kind::ablate: x = h; break;
          case Perturbation::Kind::scale: x = h + perturbation.strength * delta; break;
          case Perturbation::Kind::noise:
            x = x + perturbation.strength * delta.pow(2).mean().sqrt() * torch::randn_like(delta);
            break;
        }
      }
      ++l;
    }
    x = model->norm(x);
    auto logits = model->lm_head ? model->lm_head(x) : torch::nn::functional::linear(x, model->tok_embeddings->weight);
    const auto flat_targets = targets.to(device).reshape({-1});
    const auto loss = torch::nn::functional::cross_entropy(
        logits.to(torch::kFloat).view({-1, logits.size(-1)}), flat_targets,
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(torch::kSum));
    total += loss.item<double>();
    counted += flat_targets.ne(-1).sum().item<int64_t>();
  }
  return counted > 0 ? total / static_cast<double>(counted) : std::nan("");
}

ModelProfile profile_run(const std::string& target, const ProfileOptions& options, const std::string& out_path,
                         const std::string& data_pattern) {
  keep_host_memory_mapped();  // activation buffers are reused instead of mapped and unmapped per pass
  auto trained = load_trained_model(target);
  const auto& config = trained.config;
  TrainConfig fp32 = config.train;  // clouds and losses are measured in fp32
  fp32.precision = Precision::fp32;
  torch::set_num_threads(intra_op_threads(fp32, trained.model->tok_embeddings->weight.device()));
  const std::string data = data_pattern.empty() ? config.data.val : data_pattern;
  if (data.empty()) throw ConfigError("data.val", "is not set in the run's config", "pass --data GLOB");
  // Enough windows that the N tokens are a sparse sample of many contexts.
  const int64_t seq = config.train.seq_len;
  const int64_t windows = std::max<int64_t>(4, (4 * options.tokens + seq - 1) / seq);
  const auto clouds_from = validation_batches(data, seq, windows, 1, config.model.vocab_size).at(0).first;
  const auto val = options.perturbations.empty()
                       ? std::vector<std::pair<torch::Tensor, torch::Tensor>>{}
                       : validation_batches(data, seq, config.train.micro_batch, options.eval_batches,
                                            config.model.vocab_size);
  log::info("profiling {} ({} layers): {} tokens from {} windows of {}", trained.checkpoint,
               config.model.n_layers, options.tokens, windows, data);
  auto result = profile_model(trained.model, clouds_from, val, options);
  write_profile_json(out_path, result, options,
                     {{"checkpoint", trained.checkpoint},
                      {"step", std::to_string(trained.step)},
                      {"data", data},
                      {"seq_len", std::to_string(seq)}});
  return result;
}

}  // namespace ffnshape::profile
