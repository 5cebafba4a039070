// Checkpoints: model, optimizer moments, step, loader position and RNG state, written to a temporary
// folder, flushed, renamed into place, and marked complete by a DONE file written last. A folder
// without DONE is never resumed from.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>

#include "ffnshape/config/run_config.h"
#include "ffnshape/nn/model.h"
#include "ffnshape/train/loader.h"

namespace ffnshape {

struct TrainingState {
  int64_t step = 0;            // optimizer steps completed
  LoaderState loader;
  int64_t tokens_seen = 0;
  double elapsed_s = 0;        // training wall time so far
};

// RUN_DIR/checkpoints/step_00000100
std::string checkpoint_dir(const std::string& run_dir, int64_t step);

void save_checkpoint(const std::string& dir, nn::TransformerLM& model, torch::optim::Optimizer& optimizer,
                     const TrainingState& state);
// Restores model and optimizer in place (onto `device`) and returns the saved state. DataError for a
// missing or incomplete checkpoint.
TrainingState load_checkpoint(const std::string& dir, nn::TransformerLM& model, torch::optim::Optimizer* optimizer,
                              torch::Device device);

bool is_complete_checkpoint(const std::string& dir);
// The newest complete checkpoint of a run directory, if any.
std::optional<std::string> latest_checkpoint(const std::string& run_dir);
// A trained model ready for evaluation or profiling: the run's resolved config and the weights of a
// checkpoint, on the run's device.
struct TrainedModel {
  RunConfig config;
  std::string checkpoint;
  int64_t step = 0;
  nn::TransformerLM model{nullptr};
};
// From a run directory (its newest complete checkpoint) or a checkpoint folder inside one. DataError
// when there is no complete checkpoint or no config.yaml beside it.
TrainedModel load_trained_model(const std::string& run_dir_or_checkpoint);

// Copies the model weights of a run directory (its newest complete checkpoint) or a checkpoint folder
// into `model`, tensor by tensor: the optimizer, step and data position are not taken. DataError
// naming every tensor that is missing, unexpected or of another shape. Returns the checkpoint used.
std::string initialise_from(const std::string& run_dir_or_checkpoint, nn::TransformerLM& model);

// Keeps the newest `keep` complete checkpoints; removes older ones and leftover temporary folders.
void prune_checkpoints(const std::string& run_dir, int64_t keep);

}  // namespace ffnshape
