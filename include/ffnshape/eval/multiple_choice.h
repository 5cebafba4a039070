// Multiple-choice scoring as lm-evaluation-harness does it for causal language models: each choice's
// log-likelihood as a continuation of the context, with context and continuation encoded together
// (trailing spaces of the context move to the continuation; the continuation's tokens are those of
// the whole text past the context's own tokens; no BOS token, an empty context becomes the EOS
// token); sequences longer than the model's context keep their last tokens. `acc` picks the choice
// of highest summed log-likelihood, `acc_norm` the highest log-likelihood per character of the
// choice; both with the standard error of the mean over questions (sample standard deviation / sqrt n).
#pragma once

#include <cstdint>
#include <vector>

#include "ffnshape/eval/tasks.h"
#include "ffnshape/nn/model.h"
#include "ffnshape/train/tokenizer.h"

namespace ffnshape::eval {

struct ChoiceScore {
  double loglikelihood = 0;
  int64_t tokens = 0;      // continuation tokens
  bool is_greedy = false;  // every continuation token is the model's most likely one
};

struct QuestionScore {
  std::vector<ChoiceScore> choices;
  int64_t prediction = 0, prediction_norm = 0;
};

struct TaskScore {
  int64_t questions = 0;
  double acc = 0, acc_stderr = 0, acc_norm = 0, acc_norm_stderr = 0;
  std::vector<QuestionScore> per_question;
};

// Scores every question with `model` (fp32, no gradients, on the model's device).
TaskScore score_task(nn::TransformerLM& model, const Tokenizer& tokenizer, const std::vector<Question>& questions);

// The token ids of (context, continuation) as the harness encodes the pair.
std::pair<std::vector<int64_t>, std::vector<int64_t>> encode_pair(const Tokenizer& tokenizer, std::string context,
                                                                  std::string continuation);

}  // namespace ffnshape::eval
