// TransformerLM: token embedding, blocks, final norm, LM head (tied or untied).
#pragma once

#include <torch/torch.h>

#include "ffnshape/config/model_config.h"
#include "ffnshape/nn/block.h"
#include "ffnshape/nn/kv_cache.h"
#include "ffnshape/nn/rms_norm.h"

namespace ffnshape::nn {

struct LMOutput {
  torch::Tensor logits;   // (batch, seq, vocab) in the compute dtype
  torch::Tensor loss;     // fp32 scalar: ce_loss + z_loss term; undefined without targets
  torch::Tensor ce_loss;  // fp32 mean cross-entropy over targets != ignore_index
  torch::Tensor z_loss;   // fp32 coefficient * mean(logsumexp(logits)^2), zero when disabled
};

class TransformerLMImpl : public torch::nn::Module {
 public:
  explicit TransformerLMImpl(const ModelConfig& config);

  // idx: (batch, seq) int64 token ids -> logits.
  torch::Tensor forward(const torch::Tensor& idx);
  // The logits of idx following the positions `cache` holds (empty at the start), whose keys and
  // values it appends: decoding one token at a time without recomputing the prefix. Inference only.
  // last_only: the logits of idx's last position alone (batch, 1, vocab), which is all decoding needs;
  // the head over a whole prompt is a vocabulary-wide product per position.
  torch::Tensor forward_cached(const torch::Tensor& idx, KvCache& cache, bool last_only = false);
  // With targets (batch, seq), also the losses; targets equal to ignore_index do not count.
  LMOutput forward_with_loss(const torch::Tensor& idx, const torch::Tensor& targets, int64_t ignore_index = -1);

  // Re-draws every weight as config.init says (normal or truncated at 3 std; depth-scaled output
  // projections when asked); norm weights are reset to one. Called by the constructor.
  void reset_parameters();

  // Activation checkpointing: when on (and gradients are being recorded), each block keeps only its
  // input during the forward pass and recomputes its activations in the backward pass, under the
  // autocast state of the forward. Gradients reach the weights through the block's own backward
  // (the reentrant scheme), so they appear in .grad after loss.backward(), not through
  // torch::autograd::grad on the weights. The model has no dropout, so a recomputation is exact.
  void set_activation_checkpointing(bool enabled) { activation_checkpointing_ = enabled; }
  bool activation_checkpointing() const { return activation_checkpointing_; }

  int64_t num_parameters() const;
  const ModelConfig& config() const { return config_; }

  torch::nn::Embedding tok_embeddings{nullptr};
  torch::nn::ModuleList blocks;
  RMSNorm norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // null when embeddings are tied

 private:
  ModelConfig config_;
  bool activation_checkpointing_ = false;
};
TORCH_MODULE(TransformerLM);

// Fills `tensor` from N(0, std^2) truncated to [-3 std, 3 std] (inverse-CDF sampling, as PyTorch's
// trunc_normal_).
void truncated_normal_(torch::Tensor tensor, double std);

}  // namespace ffnshape::nn
