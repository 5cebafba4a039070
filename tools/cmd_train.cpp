// ffnshape train CONFIG [--set k=v]... [--run-dir DIR] [--resume auto|never|PATH]
// ffnshape eval RUN_DIR_OR_CHECKPOINT [--data GLOB] [--batches N] [--task FILE.jsonl [--task-format F] [--samples OUT]]
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/eval/multiple_choice.h"
#include "ffnshape/train/checkpoint.h"
#include "ffnshape/train/trainer.h"

namespace fs = std::filesystem;

namespace ffnshape::cli {
namespace {

struct TrainCliOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string run_dir;
  std::string resume = "auto";
  int64_t stop_at = 0;
};

int run_train(const TrainCliOptions& o) {
  const auto config = load_run_config(o.config, o.overrides);
  TrainOptions options;
  options.run_dir = o.run_dir.empty() ? (fs::path("runs") / fs::path(o.config).stem()).string() : o.run_dir;
  options.resume = o.resume;
  options.stop_at_step = o.stop_at;
  const auto result = train(config, options);
  if (result.rank != 0) return result.interrupted ? kExitRuntime : kExitOk;  // rank 0 reports for the job
  if (result.interrupted) {
    std::cerr << "stopped at step " << result.steps_done << "; checkpoint saved in " << options.run_dir
              << "; rerun the same command (--resume auto) to continue\n";
    return kExitRuntime;
  }
  std::cout << (result.already_complete ? "already finished earlier (nothing trained): " : "done: ")
            << result.steps_done << " steps, final loss " << result.final_loss;
  if (!std::isnan(result.val_loss)) std::cout << ", val_loss " << result.val_loss << ", val_ppl " << result.val_ppl;
  std::cout << ", " << static_cast<int64_t>(result.tokens_per_s) << " tokens/s; outputs in " << options.run_dir << "\n";
  return kExitOk;
}

struct EvalCliOptions {
  std::string target;
  std::string data;
  int64_t batches = 0;
  std::string task, task_format, samples;
};

// Zero-shot multiple choice (eval/multiple_choice.h) on one task file; --samples writes every
// choice's log-likelihood, one JSON line per question.
int run_task_eval(const EvalCliOptions& o, TrainedModel& trained) {
  const auto format = o.task_format.empty() ? eval::guess_task_format(o.task) : eval::parse_task_format(o.task_format);
  if (trained.config.data.tokenizer.empty()) {
    throw ConfigError("data.tokenizer", "is not set in the run's config, and a task is text",
                      "give the run a SentencePiece tokenizer (data.tokenizer)");
  }
  const auto tokenizer = Tokenizer::load(trained.config.data.tokenizer);
  const auto questions = eval::load_task(o.task, format);
  const auto score = eval::score_task(trained.model, tokenizer, questions);
  if (!o.samples.empty()) {
    std::ofstream out(o.samples);
    for (size_t i = 0; i < questions.size(); ++i) {
      nlohmann::json choices = nlohmann::json::array();
      for (const auto& c : score.per_question[i].choices) {
        choices.push_back({{"loglikelihood", c.loglikelihood}, {"tokens", c.tokens}, {"is_greedy", c.is_greedy}});
      }
      out << nlohmann::json{{"context", questions[i].context}, {"choices", questions[i].choices},
                            {"gold", questions[i].gold}, {"scores", choices},
                            {"prediction", score.per_question[i].prediction},
                            {"prediction_norm", score.per_question[i].prediction_norm}}.dump()
          << "\n";
    }
  }
  std::cout << nlohmann::json{{"checkpoint", trained.checkpoint}, {"step", trained.step}, {"task", o.task},
                              {"format", eval::to_string(format)}, {"questions", score.questions},
                              {"acc", score.acc}, {"acc_stderr", score.acc_stderr}, {"acc_norm", score.acc_norm},
                              {"acc_norm_stderr", score.acc_norm_stderr}}.dump(2)
            << "\n";
  return kExitOk;
}

int run_eval(const EvalCliOptions& o) {
  auto trained = load_trained_model(o.target);
  if (!o.task.empty()) return run_task_eval(o, trained);
  auto& config = trained.config;
  if (o.batches > 0) config.eval.batches = o.batches;
  const std::string data = o.data.empty() ? config.data.val : o.data;
  if (data.empty()) throw ConfigError("data.val", "is not set in the run's config", "pass --data GLOB");
  const auto device = trained.model->tok_embeddings->weight.device();
  const auto [loss, ppl] = evaluate(trained.model, config, device, data);
  std::cout << nlohmann::json{{"checkpoint", trained.checkpoint}, {"step", trained.step}, {"data", data},
                              {"val_loss", loss}, {"val_ppl", ppl}}.dump(2)
            << "\n";
  return kExitOk;
}

}  // namespace

Subcommand add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainCliOptions>();
  auto* sub = app.add_subcommand("train", "Train a model from a YAML config (resumable)");
  sub->add_option("config", o->config, "Config YAML")->required()->check(CLI::ExistingFile);
  sub->add_option("--set", o->overrides, "Override a key: dotted.key=value (repeatable)")->allow_extra_args(false);
  sub->add_option("--run-dir", o->run_dir, "Output directory (default runs/<config name>)");
  sub->add_option("--resume", o->resume, "auto (newest complete checkpoint), never, or a checkpoint folder");
  sub->add_option("--stop-at", o->stop_at, "Checkpoint and stop cleanly after this step (time slicing)");
  return {sub, [o] { return run_train(*o); }};
}

Subcommand add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalCliOptions>();
  auto* sub = app.add_subcommand("eval", "Validation loss and perplexity of a run's checkpoint");
  sub->add_option("target", o->target, "Run directory or checkpoint folder")->required();
  sub->add_option("--data", o->data, "Validation shard glob (default the run's data.val)");
  sub->add_option("--batches", o->batches, "Validation batches (default the run's eval.batches)");
  sub->add_option("--task", o->task, "Zero-shot multiple-choice task file (JSON lines: ARC, HellaSwag or PIQA)");
  sub->add_option("--task-format", o->task_format, "arc | hellaswag | piqa (default: from the file name)");
  sub->add_option("--samples", o->samples, "With --task: write every choice's log-likelihood here (JSON lines)");
  return {sub, [o] { return run_eval(*o); }};
}

}  // namespace ffnshape::cli
