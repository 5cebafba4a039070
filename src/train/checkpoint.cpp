#include "ffnshape/train/checkpoint.h"

#include "ffnshape/train/data_error.h"
#include "ffnshape/train/trainer.h"

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace ffnshape {
namespace {

constexpr const char* kDone = "DONE";

// Flushes a file or folder to disk, so a rename or DONE marker never points at data still in cache.
void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::vector<fs::path> step_dirs(const std::string& run_dir) {
  std::vector<fs::path> dirs;
  const fs::path root = fs::path(run_dir) / "checkpoints";
  if (!fs::is_directory(root)) return dirs;
  for (const auto& entry : fs::directory_iterator(root)) {
    const auto name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("step_", 0) == 0) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());  // zero-padded step numbers sort in step order
  return dirs;
}

}  // namespace

std::string checkpoint_dir(const std::string& run_dir, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step_%08lld", static_cast<long long>(step));
  return (fs::path(run_dir) / "checkpoints" / name).string();
}

void save_checkpoint(const std::string& dir, nn::TransformerLM& model, torch::optim::Optimizer& optimizer,
                     const TrainingState& state) {
  const fs::path final_dir(dir);
  const fs::path tmp = final_dir.string() + ".tmp";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  torch::save(model, (tmp / "model.pt").string());
  torch::save(optimizer, (tmp / "optimizer.pt").string());
  torch::save(at::detail::getDefaultCPUGenerator().get_state(), (tmp / "rng_cpu.pt").string());
  const nlohmann::json meta = {{"step", state.step},
                               {"loader_batches_drawn", state.loader.batches_drawn},
                               {"tokens_seen", state.tokens_seen},
                               {"elapsed_s", state.elapsed_s}};
  {
    std::ofstream out(tmp / "state.json");
    out << meta.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write checkpoint state in " + tmp.string());
  }
  for (const auto& file : fs::directory_iterator(tmp)) sync_path(file.path());
  sync_path(tmp);
  fs::remove_all(final_dir);
  fs::rename(tmp, final_dir);
  sync_path(final_dir.parent_path());
  std::ofstream(final_dir / kDone) << state.step << "\n";
  sync_path(final_dir / kDone);
}

bool is_complete_checkpoint(const std::string& dir) { return fs::exists(fs::path(dir) / kDone); }

TrainingState load_checkpoint(const std::string& dir, nn::TransformerLM& model, torch::optim::Optimizer* optimizer,
                              torch::Device device) {
  if (!fs::is_directory(dir)) throw DataError("checkpoint '" + dir + "' does not exist\n  fix: check the path");
  if (!is_complete_checkpoint(dir)) {
    throw DataError("checkpoint '" + dir + "' is incomplete (no DONE marker: it was interrupted while saving)\n"
                    "  fix: resume from an earlier checkpoint, or use --resume auto to pick the newest complete one");
  }
  TrainingState state;
  try {
    torch::load(model, (fs::path(dir) / "model.pt").string(), device);
    if (optimizer) torch::load(*optimizer, (fs::path(dir) / "optimizer.pt").string(), device);
    torch::Tensor rng;
    torch::load(rng, (fs::path(dir) / "rng_cpu.pt").string());
    auto generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(rng);
    std::ifstream in(fs::path(dir) / "state.json");
    const auto meta = nlohmann::json::parse(in);
    state.step = meta.at("step").get<int64_t>();
    state.loader.batches_drawn = meta.at("loader_batches_drawn").get<uint64_t>();
    state.tokens_seen = meta.at("tokens_seen").get<int64_t>();
    state.elapsed_s = meta.at("elapsed_s").get<double>();
  } catch (const c10::Error& e) {
    throw DataError("checkpoint '" + dir + "' does not fit this model or is corrupt: " + e.what_without_backtrace() +
                    "\n  fix: resume with the config the run was started with");
  } catch (const nlohmann::json::exception& e) {
    throw DataError("checkpoint '" + dir + "' has a corrupt state.json: " + e.what());
  } catch (const std::exception& e) {  // LibTorch's deserializer also throws others (torch::jit's ErrorReport)
    throw DataError("checkpoint '" + dir + "' is corrupt: " + e.what() +
                    "\n  fix: resume from an earlier checkpoint, or use --resume auto to pick the newest complete one");
  }
  return state;
}

std::optional<std::string> latest_checkpoint(const std::string& run_dir) {
  auto dirs = step_dirs(run_dir);
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    if (it->extension() != ".tmp" && is_complete_checkpoint(it->string())) return it->string();
  }
  return std::nullopt;
}

void prune_checkpoints(const std::string& run_dir, int64_t keep) {
  auto dirs = step_dirs(run_dir);
  int64_t kept = 0;
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    const bool complete = it->extension() != ".tmp" && is_complete_checkpoint(it->string());
    if (complete && kept < keep) {
      ++kept;
      continue;
    }
    fs::remove_all(*it);
  }
}

namespace {

// A run directory (its newest complete checkpoint) or a checkpoint folder inside one, and the run
// directory whose config.yaml describes it.
std::pair<fs::path, std::string> resolve_checkpoint(const std::string& target) {
  if (is_complete_checkpoint(target)) return {fs::path(target).parent_path().parent_path(), target};
  if (!fs::exists(target)) {
    throw DataError("'" + target + "' does not exist\n  fix: give a run directory or a checkpoint folder");
  }
  const auto latest = latest_checkpoint(target);
  if (!latest) {
    throw DataError("'" + target + "' holds no complete checkpoint\n  fix: give a run directory or a checkpoint folder");
  }
  return {fs::path(target), *latest};
}

RunConfig config_of_run(const fs::path& run_dir) {
  const auto config_path = run_dir / "config.yaml";
  if (!fs::exists(config_path)) {
    throw DataError("'" + config_path.string() + "' is missing\n  fix: give a checkpoint inside a run directory written by `ffnshape train`");
  }
  return load_run_config(config_path.string());
}

std::string shape_text(const torch::Tensor& t) {
  std::string text = "[";
  for (int64_t i = 0; i < t.dim(); ++i) text += (i ? ", " : "") + std::to_string(t.size(i));
  return text + "]";
}

// "name: checkpoint [a, b], this model [c, d]" lines for every difference, five at most.
std::string weight_differences(const torch::OrderedDict<std::string, torch::Tensor>& source,
                               const torch::OrderedDict<std::string, torch::Tensor>& target) {
  std::vector<std::string> lines;
  for (const auto& item : target) {
    const auto* found = source.find(item.key());
    if (!found) lines.push_back(item.key() + ": not in the checkpoint");
    else if (!found->sizes().equals(item.value().sizes()))
      lines.push_back(item.key() + ": checkpoint " + shape_text(*found) + ", this model " + shape_text(item.value()));
  }
  for (const auto& item : source) {
    if (!target.find(item.key())) lines.push_back(item.key() + ": in the checkpoint, not in this model");
  }
  std::string text;
  for (size_t i = 0; i < std::min<size_t>(lines.size(), 5); ++i) text += "\n  " + lines[i];
  if (lines.size() > 5) text += "\n  ... and " + std::to_string(lines.size() - 5) + " more";
  return text;
}

}  // namespace

TrainedModel load_trained_model(const std::string& target) {
  TrainedModel trained;
  const auto [run_dir, checkpoint] = resolve_checkpoint(target);
  trained.checkpoint = checkpoint;
  trained.config = config_of_run(run_dir);
  const auto device = resolve_device(trained.config.train.device);
  trained.model = nn::TransformerLM(trained.config.model);
  trained.model->to(device);
  trained.step = load_checkpoint(trained.checkpoint, trained.model, nullptr, device).step;
  return trained;
}

std::string initialise_from(const std::string& target, nn::TransformerLM& model) {
  const auto [run_dir, checkpoint] = resolve_checkpoint(target);
  // The source is rebuilt from its own config on the CPU, so any shape difference is found by name.
  // Parameters only: the buffers (RoPE tables) follow from this run's config.
  nn::TransformerLM source(config_of_run(run_dir).model);
  load_checkpoint(checkpoint, source, nullptr, torch::kCPU);
  auto from = source->named_parameters();
  auto to = model->named_parameters();
  const auto differences = weight_differences(from, to);
  if (!differences.empty()) {
    throw DataError("train.init_from: the weights of '" + checkpoint + "' do not fit this model:" + differences +
                    "\n  fix: give the model section of " + (run_dir / "config.yaml").string() +
                    " (copy it, or --set the differing model keys)");
  }
  torch::NoGradGuard no_grad;
  for (auto& item : to) item.value().copy_(*from.find(item.key()));
  return checkpoint;
}

}  // namespace ffnshape
