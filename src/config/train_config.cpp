#include "ffnshape/config/train_config.h"

#include "ffnshape/config/yaml_reader.h"

namespace ffnshape {
namespace {

int64_t at_least(YamlSection& s, const std::string& key, int64_t fallback, int64_t minimum) {
  const auto value = s.get(key, fallback);
  if (value < minimum) {
    throw s.error(key, "must be at least " + std::to_string(minimum) + ", but is " + std::to_string(value),
                  "use a value >= " + std::to_string(minimum));
  }
  return value;
}

double non_negative(YamlSection& s, const std::string& key, double fallback) {
  const auto value = s.get(key, fallback);
  if (!(value >= 0)) throw s.error(key, "must be zero or positive", "check the sign");
  return value;
}

}  // namespace

const char* to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "bf16"; }

const char* to_string(LrSchedule s) {
  switch (s) {
    case LrSchedule::cosine: return "cosine";
    case LrSchedule::linear: return "linear";
    case LrSchedule::wsd: return "wsd";
    default: return "constant";
  }
}

const char* to_string(FusedOptimizer f) {
  switch (f) {
    case FusedOptimizer::on: return "true";
    case FusedOptimizer::off: return "false";
    default: return "auto";
  }
}

DataConfig parse_data_config(YamlSection& s) {
  DataConfig c;
  c.train = s.get("train", c.train);
  c.val = s.get("val", c.val);
  c.tokenizer = s.get("tokenizer", c.tokenizer);
  s.finish();
  return c;
}

TrainConfig parse_train_config(YamlSection& s) {
  TrainConfig c;
  c.seq_len = at_least(s, "seq_len", c.seq_len, 1);
  c.micro_batch = at_least(s, "micro_batch", c.micro_batch, 1);
  c.grad_accum = at_least(s, "grad_accum", c.grad_accum, 1);
  c.steps = at_least(s, "steps", c.steps, 1);
  c.seed = static_cast<uint64_t>(at_least(s, "seed", 0, 0));
  c.threads = at_least(s, "threads", c.threads, 0);
  const auto precision = s.get<std::string>("precision", "fp32");
  if (precision == "bf16") {
    c.precision = Precision::bf16;
  } else if (precision != "fp32") {
    throw s.error("precision", "unknown value '" + precision + "'", "use fp32 or bf16");
  }
  c.device = s.get("device", c.device);
  if (c.device != "auto" && c.device != "cpu" && c.device.rfind("cuda", 0) != 0) {
    throw s.error("device", "unknown device '" + c.device + "'", "use auto, cpu, cuda or cuda:N");
  }
  c.tf32 = s.get("tf32", c.tf32);
  c.activation_checkpointing = s.get("activation_checkpointing", c.activation_checkpointing);
  c.deterministic = s.get("deterministic", c.deterministic);
  c.peak_tflops = non_negative(s, "peak_tflops", c.peak_tflops);
  c.zero = at_least(s, "zero", c.zero, 0);
  if (c.zero > 1) throw s.error("zero", "is " + std::to_string(c.zero) + "; only stage 1 exists", "use zero: 0 or 1");
  c.bucket_mb = non_negative(s, "bucket_mb", c.bucket_mb);
  if (c.bucket_mb <= 0) throw s.error("bucket_mb", "must be positive", "use e.g. 25 (MB per gradient bucket)");
  c.overlap_comm = s.get("overlap_comm", c.overlap_comm);
  c.collective_timeout_s = non_negative(s, "collective_timeout_s", c.collective_timeout_s);
  if (c.collective_timeout_s < 1) {
    throw s.error("collective_timeout_s", "is below 1 s", "use e.g. 600; a lost rank is reported after this long");
  }
  c.init_from = s.get("init_from", c.init_from);
  s.finish();
  return c;
}

OptimizerConfig parse_optimizer_config(YamlSection& s) {
  OptimizerConfig c;
  c.lr = non_negative(s, "lr", c.lr);
  c.min_lr = non_negative(s, "min_lr", c.min_lr);
  if (c.min_lr > c.lr) throw s.error("min_lr", "is larger than optimizer.lr", "set min_lr <= lr");
  c.warmup_steps = at_least(s, "warmup_steps", c.warmup_steps, 0);
  const auto schedule = s.get<std::string>("schedule", "cosine");
  if (schedule == "cosine") c.schedule = LrSchedule::cosine;
  else if (schedule == "linear") c.schedule = LrSchedule::linear;
  else if (schedule == "wsd") c.schedule = LrSchedule::wsd;
  else if (schedule == "constant") c.schedule = LrSchedule::constant;
  else throw s.error("schedule", "unknown schedule '" + schedule + "'", "use cosine, linear, wsd or constant");
  c.decay_fraction = non_negative(s, "decay_fraction", c.decay_fraction);
  if (c.decay_fraction > 1) throw s.error("decay_fraction", "must be at most 1", "e.g. 0.2: the last 20% of steps");
  c.weight_decay = non_negative(s, "weight_decay", c.weight_decay);
  c.betas = s.get("betas", c.betas);
  if (c.betas.size() != 2 || !(c.betas[0] >= 0 && c.betas[0] < 1) || !(c.betas[1] >= 0 && c.betas[1] < 1)) {
    throw s.error("betas", "must be two numbers in [0, 1)", "e.g. [0.9, 0.95]");
  }
  c.eps = s.get("eps", c.eps);
  if (!(c.eps > 0)) throw s.error("eps", "must be positive", "e.g. 1e-8");
  c.clip = non_negative(s, "clip", c.clip);
  c.decay_embeddings = s.get("decay_embeddings", c.decay_embeddings);
  c.decay_norms = s.get("decay_norms", c.decay_norms);
  const auto fused = s.get<std::string>("fused", "auto");
  if (fused == "true") c.fused = FusedOptimizer::on;
  else if (fused == "false") c.fused = FusedOptimizer::off;
  else if (fused != "auto") throw s.error("fused", "unknown value '" + fused + "'", "use auto, true or false");
  s.finish();
  return c;
}

EvalConfig parse_eval_config(YamlSection& s) {
  EvalConfig c;
  c.every = at_least(s, "every", c.every, 0);
  c.batches = at_least(s, "batches", c.batches, 1);
  s.finish();
  return c;
}

CheckpointConfig parse_checkpoint_config(YamlSection& s) {
  CheckpointConfig c;
  c.every = at_least(s, "every", c.every, 0);
  c.keep = at_least(s, "keep", c.keep, 1);
  s.finish();
  return c;
}

LogConfig parse_log_config(YamlSection& s) {
  LogConfig c;
  c.every = at_least(s, "every", c.every, 1);
  c.tensorboard = s.get("tensorboard", c.tensorboard);
  c.layer_stats_every = at_least(s, "layer_stats_every", c.layer_stats_every, 0);
  s.finish();
  return c;
}

}  // namespace ffnshape
