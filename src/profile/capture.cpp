// The model side of profiling: one forward pass that keeps the clouds, and validation losses with
// one or more layers' FFN updates perturbed.
#include <cmath>
#include <random>

#include "ffnshape/config/config_error.h"
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

}  // namespace ffnshape::profile
