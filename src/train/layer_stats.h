// Per-layer diagnostics of training (log.layer_stats_every): what each block does to the residual
// stream, and how hard each layer's attention and FFN are being pushed. Internal to the trainer.
//
// Per layer l, with x_l the residual stream into block l, h_l = x_l + Attn(x_l) after attention and
// x_{l+1} = h_l + FFN(h_l) out of it (nn/block.h), and RMS(t) = sqrt(mean of t's squared elements):
//   resid_in_rms  RMS(x_l)            attn_out_rms  RMS(h_l - x_l)      ffn_out_rms  RMS(x_{l+1} - h_l)
//   resid_out_rms RMS(x_{l+1})
//   attn_grad_norm, ffn_grad_norm       L2 norm of the gradient of the layer's attention (with its norm)
//                                       and FFN stack parameters, summed over ranks, before clipping
//   attn_update_ratio, ffn_update_ratio ||W_after - W_before|| / ||W_before|| over the same parameters,
//                                       for the optimizer step just taken
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "ffnshape/config/train_config.h"
#include "ffnshape/nn/model.h"

namespace ffnshape {

struct LayerStats {
  static const std::vector<std::string>& names();  // the statistics, in the order above

  // name -> one value per layer; filled by the three measurements below.
  std::map<std::string, std::vector<double>> values;
  double seconds = 0;  // what the measurements cost the step (the trainer times them)

  nlohmann::json to_json() const { return values; }  // metrics.jsonl's "layers" entry
};

// The four RMS statistics on token ids `tokens` (batch, seq): a forward pass without gradients under
// the training precision's autocast, RMS taken in fp32.
void measure_activations(nn::TransformerLM& model, const torch::Tensor& tokens, Precision precision,
                         LayerStats& stats);

// The gradient norms, from .grad as the backward pass (and the sum over ranks) left it.
void measure_gradients(nn::TransformerLM& model, LayerStats& stats);

// Copies each layer's weights before an optimizer step; finish() measures the update ratios after it.
class UpdateProbe {
 public:
  explicit UpdateProbe(nn::TransformerLM& model);
  void finish(nn::TransformerLM& model, LayerStats& stats) const;

 private:
  std::vector<std::vector<torch::Tensor>> attn_before_, ffn_before_;  // per layer
};

// Whether `step` (1-based, just finished) is one whose statistics are recorded: step 1 and every
// `every` steps (every = 0: none).
bool layer_stats_due(int64_t step, int64_t every);

}  // namespace ffnshape
