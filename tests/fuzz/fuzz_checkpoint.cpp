// Training checkpoints: a valid checkpoint of a tiny model with one of its four files replaced by the
// input (the first byte picks which), loaded back into the model and optimizer as `--resume` does.
// model.pt, optimizer.pt and rng_cpu.pt are read by LibTorch's own serializer (not instrumented);
// what ffnshape checks is that its errors, and only those, come out.
#include "fuzz_support.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/nn/model.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/optimizer.h"

#include <filesystem>
#include <iterator>

namespace {

namespace fs = std::filesystem;
const char* const kFiles[] = {"model.pt", "optimizer.pt", "rng_cpu.pt", "state.json"};

struct Fixture {
  ffnshape::RunConfig config = ffnshape::load_run_config_from_string(R"(
model: {vocab_size: 16, d_model: 8, n_layers: 1, n_heads: 2, max_seq_len: 8, ffn: {hidden: 16}}
train: {seq_len: 8, micro_batch: 1, steps: 1, threads: 1}
)");
  ffnshape::nn::TransformerLM model{config.model};
  std::unique_ptr<torch::optim::AdamW> optimizer = ffnshape::make_optimizer(model, config.optimizer);
  std::string valid = fuzz::scratch_dir() + "/valid";
  std::string dir = fuzz::scratch_dir() + "/checkpoint";

  Fixture() {
    torch::manual_seed(0);
    fs::remove_all(valid);
    ffnshape::save_checkpoint(valid, model, *optimizer, ffnshape::TrainingState{});
    fs::remove_all(dir);
    fs::copy(valid, dir);
    if (const char* seeds = std::getenv("FFNSHAPE_FUZZ_WRITE_SEEDS")) write_seeds(seeds);
  }

  // One seed per file of the valid checkpoint: its selector byte, then the file (scripts/fuzz.sh).
  void write_seeds(const fs::path& out) const {
    fs::create_directories(out);
    for (size_t i = 0; i < std::size(kFiles); ++i) {
      std::ifstream in(fs::path(valid) / kFiles[i], std::ios::binary);
      std::ofstream seed(out / (std::string("valid_") + kFiles[i]), std::ios::binary);
      seed.put(static_cast<char>(i));
      seed << in.rdbuf();
    }
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto& f = fixture();
  const char* replaced = kFiles[data[0] % std::size(kFiles)];
  for (const char* name : kFiles) fs::copy_file(fs::path(f.valid) / name, fs::path(f.dir) / name, fs::copy_options::overwrite_existing);
  fuzz::write_file(std::string("checkpoint/") + replaced, data + 1, size - 1);
  fuzz::expect_clean_errors([&] { (void)ffnshape::load_checkpoint(f.dir, f.model, f.optimizer.get(), torch::kCPU); });
  return 0;
}
