// The training sections of a config: data, train, optimizer, eval, checkpoint, log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ffnshape {

class YamlSection;

struct DataConfig {
  std::string train;      // shard glob
  std::string val;        // shard glob (empty: no validation)
  std::string tokenizer;  // SentencePiece model (optional; for decoding and provenance)
};

enum class Precision { fp32, bf16 };
enum class LrSchedule { cosine, linear, wsd, constant };
enum class FusedOptimizer { automatic, on, off };  // automatic: fused on CUDA, per-tensor on the CPU

struct TrainConfig {
  int64_t seq_len = 256;
  int64_t micro_batch = 8;
  int64_t grad_accum = 1;
  int64_t steps = 1000;
  uint64_t seed = 0;
  Precision precision = Precision::fp32;
  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  int64_t threads = 0;          // torch intra-op threads; 0: automatic (see intra_op_threads)
  bool tf32 = true;             // TF32 tensor cores for fp32 matrix products on CUDA
  bool activation_checkpointing = false;  // recompute each block's activations in backward
  bool deterministic = false;   // deterministic kernels only (an operator without one is an error)
  double peak_tflops = 0;       // MFU denominator in TFLOP/s; 0: the published peak of a known GPU,
                                // else a product timed at start-up
  // Data parallel (used when the launcher starts several ranks; micro_batch is per rank):
  int64_t zero = 0;             // 1: ZeRO-1, each rank keeps and updates 1/R of the AdamW moments
  double bucket_mb = 25;        // gradient all-reduce bucket size in MB
  bool overlap_comm = true;     // start each bucket's all-reduce during backward (false: after it)
  double collective_timeout_s = 600;  // a collective not done within this is an error naming the lost rank
  // A run directory or checkpoint folder whose model weights start this run: weights only, a fresh
  // optimizer and step 0 (continued pretraining, fine-tuning). Ignored when the run resumes.
  std::string init_from;
};

struct OptimizerConfig {
  double lr = 3e-4;
  double min_lr = 3e-5;
  int64_t warmup_steps = 100;
  LrSchedule schedule = LrSchedule::cosine;
  double decay_fraction = 0.2;  // wsd: final share of steps spent decaying
  double weight_decay = 0.1;
  std::vector<double> betas = {0.9, 0.95};
  double eps = 1e-8;
  double clip = 1.0;            // global gradient-norm clip; 0 disables
  bool decay_embeddings = false;
  bool decay_norms = false;
  FusedOptimizer fused = FusedOptimizer::automatic;  // one fused AdamW kernel per step (key: auto|true|false)
};

struct EvalConfig {
  int64_t every = 100;   // 0: only at the end
  int64_t batches = 20;
};

struct CheckpointConfig {
  int64_t every = 200;   // 0: only at the end
  int64_t keep = 2;
};

struct LogConfig {
  int64_t every = 10;
  bool tensorboard = false;  // RUN/tb/: TensorBoard event files of the logged scalars, config and shape
  // Per-layer statistics (residual-stream and sub-layer RMS, gradient norms, update-to-weight ratios)
  // at step 1 and every this many steps; 0: off.
  int64_t layer_stats_every = 0;
};

// Readers: each reads its section strictly (finish() included). Validation throws ConfigError.
DataConfig parse_data_config(YamlSection& section);
TrainConfig parse_train_config(YamlSection& section);
OptimizerConfig parse_optimizer_config(YamlSection& section);
EvalConfig parse_eval_config(YamlSection& section);
CheckpointConfig parse_checkpoint_config(YamlSection& section);
LogConfig parse_log_config(YamlSection& section);

const char* to_string(Precision precision);
const char* to_string(LrSchedule schedule);
const char* to_string(FusedOptimizer fused);

}  // namespace ffnshape
