// Zero-shot multiple choice: the harness's pair encoding, each choice's log-likelihood against the
// model's own cross-entropy on the same tokens, the task formats' prompts and their refusals.
// (tests/cli_eval_test.sh compares the prompts with lm-evaluation-harness itself.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ffnshape/eval/multiple_choice.h"
#include "ffnshape/train/data_error.h"
#include "temp_dir.h"

using namespace ffnshape;
using ffnshape::testing::TempDir;
namespace fs = std::filesystem;

namespace {

Tokenizer small_tokenizer(const TempDir& dir) {
  std::ofstream out(dir.path() / "text.txt");
  for (int i = 0; i < 40; ++i) {
    out << "Question: which animal lays eggs?\nAnswer: a hen lays eggs, a dog does not.\n"
        << "the sun gives light and plants need sunlight to make food.\n";
  }
  out.close();
  return Tokenizer::train({(dir.path() / "text.txt").string()}, (dir.path() / "tok").string(), 320, 1);
}

std::vector<int64_t> ids(const Tokenizer& t, const std::string& text) {
  const auto e = t.encode(text);
  return {e.begin(), e.end()};
}

}  // namespace

TEST(MultipleChoice, PairsAreEncodedTogetherWithTrailingSpacesMoved) {
  TempDir dir;
  const auto tok = small_tokenizer(dir);
  const auto [context, continuation] = eval::encode_pair(tok, "Question: which animal lays eggs?\nAnswer:", " a hen");
  auto whole = context;
  whole.insert(whole.end(), continuation.begin(), continuation.end());
  EXPECT_EQ(whole, ids(tok, "Question: which animal lays eggs?\nAnswer: a hen"));
  EXPECT_EQ(context, ids(tok, "Question: which animal lays eggs?\nAnswer:"));
  // A context ending in spaces gives them to the continuation.
  EXPECT_EQ(eval::encode_pair(tok, "Answer: ", "a hen"), eval::encode_pair(tok, "Answer:", " a hen"));
  // An empty context is the BOS token (EOS without one).
  EXPECT_EQ(eval::encode_pair(tok, "", "a hen").first, std::vector<int64_t>{static_cast<int64_t>(tok.bos_id())});
}

TEST(MultipleChoice, LogLikelihoodIsTheModelsCrossEntropyOnTheContinuation) {
  TempDir dir;
  const auto tok = small_tokenizer(dir);
  auto config = ModelConfig::defaults_for(Family::llama);
  config.vocab_size = 320;
  config.d_model = 32;
  config.n_layers = 2;
  config.n_heads = 4;
  config.max_seq_len = 64;
  config.ffn.hidden = 48;
  torch::manual_seed(0);
  nn::TransformerLM model(config);
  eval::Question q{"Question: which animal lays eggs?\nAnswer:", {"a dog", "a hen", "the sun gives light"}, 1};
  const auto score = eval::score_task(model, tok, {q, q});
  ASSERT_EQ(score.per_question.size(), 2u);
  torch::NoGradGuard no_grad;
  model->eval();
  double best = -1e30, best_norm = -1e30;
  int64_t pick = -1, pick_norm = -1;
  for (size_t i = 0; i < q.choices.size(); ++i) {
    auto [context, continuation] = eval::encode_pair(tok, q.context, " " + q.choices[i]);
    auto whole = context;
    whole.insert(whole.end(), continuation.begin(), continuation.end());
    const auto input = torch::tensor(std::vector<int64_t>(whole.begin(), whole.end() - 1)).unsqueeze(0);
    auto targets = torch::tensor(std::vector<int64_t>(whole.begin() + 1, whole.end())).unsqueeze(0);
    targets.narrow(1, 0, static_cast<int64_t>(context.size()) - 1).fill_(-1);  // context positions do not count
    const double n = static_cast<double>(continuation.size());
    const double expected = -model->forward_with_loss(input, targets, -1).ce_loss.item<double>() * n;
    const auto& got = score.per_question[0].choices[i];
    EXPECT_NEAR(got.loglikelihood, expected, 1e-4) << q.choices[i];
    EXPECT_EQ(got.tokens, static_cast<int64_t>(n));
    if (expected > best) best = expected, pick = static_cast<int64_t>(i);
    const double per_char = expected / static_cast<double>(q.choices[i].size());
    if (per_char > best_norm) best_norm = per_char, pick_norm = static_cast<int64_t>(i);
  }
  EXPECT_EQ(score.per_question[0].prediction, pick);
  EXPECT_EQ(score.per_question[0].prediction_norm, pick_norm);
  EXPECT_EQ(score.acc, pick == 1 ? 1.0 : 0.0);
  EXPECT_EQ(score.acc_stderr, 0.0);  // two equal answers: no spread
}

TEST(Tasks, HellaSwagPreprocessingAndPythonCapitalize) {
  EXPECT_EQ(eval::capitalize("then PULL the ends"), "Then pull the ends");
  EXPECT_EQ(eval::hellaswag_preprocess("  How to tie [title] Fold it [step] twice  and  done "),
            "How to tie. Fold it twice and done");
}

TEST(Tasks, MalformedFilesAreRefusedWithTheLine) {
  TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.path() / name) << text;
    return (dir.path() / name).string();
  };
  const auto bad_json = write("a.jsonl", "{\"goal\": \"x\", \"sol1\": \"a\", \"sol2\": \"b\", \"label\": 0}\n{oops\n");
  try {
    eval::load_task(bad_json, eval::TaskFormat::piqa);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("a.jsonl:2"), std::string::npos) << e.what();
  }
  const auto missing = write("b.jsonl", "{\"question\": \"x\", \"answerKey\": \"A\"}\n");
  EXPECT_THROW(eval::load_task(missing, eval::TaskFormat::arc), DataError);
  const auto bad_gold = write("c.jsonl", "{\"goal\": \"x\", \"sol1\": \"a\", \"sol2\": \"b\", \"label\": 2}\n");
  EXPECT_THROW(eval::load_task(bad_gold, eval::TaskFormat::piqa), DataError);
  EXPECT_THROW(eval::load_task(write("d.jsonl", "\n"), eval::TaskFormat::piqa), DataError);
  EXPECT_THROW(eval::load_task((dir.path() / "none.jsonl").string(), eval::TaskFormat::piqa), DataError);
  EXPECT_EQ(eval::guess_task_format("data/ARC_Easy_test.jsonl"), eval::TaskFormat::arc);
  EXPECT_EQ(eval::guess_task_format("hellaswag_val.jsonl"), eval::TaskFormat::hellaswag);
}
