#include "ffnshape/eval/multiple_choice.h"

#include <cmath>

namespace ffnshape::eval {
namespace {

std::vector<int64_t> encode(const Tokenizer& tokenizer, const std::string& text) {
  const auto ids = tokenizer.encode(text);
  return {ids.begin(), ids.end()};
}

// Characters as Python counts them (code points), for acc_norm.
int64_t code_points(const std::string& text) {
  int64_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// Mean and its standard error with the sample standard deviation (n - 1), as the harness reports.
std::pair<double, double> mean_and_stderr(const std::vector<double>& values) {
  const double n = static_cast<double>(values.size());
  double mean = 0;
  for (double v : values) mean += v / n;
  if (values.size() < 2) return {mean, 0.0};
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / (n - 1)) / std::sqrt(n)};
}

// Log-likelihoods of every choice of one question, in one right-padded batch (causal attention keeps
// padding from touching the real positions).
std::vector<ChoiceScore> score_choices(nn::TransformerLM& model, const Tokenizer& tokenizer, const Question& question) {
  const int64_t max_length = model->config().max_seq_len;
  std::vector<std::vector<int64_t>> inputs, continuations;
  for (const auto& choice : question.choices) {
    auto [context, continuation] = encode_pair(tokenizer, question.context, " " + choice);
    std::vector<int64_t> whole = context;
    whole.insert(whole.end(), continuation.begin(), continuation.end());
    // The harness keeps the last max_length + 1 tokens and feeds all but the last.
    if (static_cast<int64_t>(whole.size()) > max_length + 1) whole.erase(whole.begin(), whole.end() - (max_length + 1));
    whole.pop_back();
    inputs.push_back(whole);
    continuations.push_back(continuation);
  }
  int64_t longest = 0;
  for (const auto& row : inputs) longest = std::max<int64_t>(longest, static_cast<int64_t>(row.size()));
  auto batch = torch::zeros({static_cast<int64_t>(inputs.size()), longest}, torch::kLong);
  for (size_t i = 0; i < inputs.size(); ++i) {
    batch[static_cast<int64_t>(i)].narrow(0, 0, static_cast<int64_t>(inputs[i].size())).copy_(torch::tensor(inputs[i]));
  }
  const auto device = model->tok_embeddings->weight.device();
  const auto log_probs = torch::log_softmax(model->forward(batch.to(device)).to(torch::kFloat), -1).cpu();
  std::vector<ChoiceScore> scores;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t length = static_cast<int64_t>(inputs[i].size());
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(continuations[i].size()), length);
    const auto rows = log_probs[static_cast<int64_t>(i)].narrow(0, length - n, n);
    const auto targets = torch::tensor(continuations[i]).narrow(0, static_cast<int64_t>(continuations[i].size()) - n, n);
    ChoiceScore score;
    score.tokens = n;
    score.loglikelihood = rows.gather(1, targets.unsqueeze(1)).sum().item<double>();
    score.is_greedy = torch::equal(rows.argmax(1), targets);
    scores.push_back(score);
  }
  return scores;
}

}  // namespace

std::pair<std::vector<int64_t>, std::vector<int64_t>> encode_pair(const Tokenizer& tokenizer, std::string context,
                                                                  std::string continuation) {
  const size_t kept = context.find_last_not_of(' ');
  const size_t trailing = kept == std::string::npos ? context.size() : context.size() - kept - 1;
  if (trailing > 0) {
    continuation = context.substr(context.size() - trailing) + continuation;
    context.resize(context.size() - trailing);
  }
  if (context.empty()) {
    const int prefix = tokenizer.bos_id() >= 0 ? tokenizer.bos_id() : tokenizer.eos_id();
    return {{prefix}, encode(tokenizer, continuation)};
  }
  const auto whole = encode(tokenizer, context + continuation);
  const auto context_ids = encode(tokenizer, context);
  const auto split = std::min(context_ids.size(), whole.size());
  return {std::vector<int64_t>(whole.begin(), whole.begin() + split), std::vector<int64_t>(whole.begin() + split, whole.end())};
}

TaskScore score_task(nn::TransformerLM& model, const Tokenizer& tokenizer, const std::vector<Question>& questions) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  TaskScore task;
  std::vector<double> correct, correct_norm;
  for (const auto& question : questions) {
    QuestionScore q;
    q.choices = score_choices(model, tokenizer, question);
    double best = -INFINITY, best_norm = -INFINITY;
    for (size_t i = 0; i < q.choices.size(); ++i) {
      const double ll = q.choices[i].loglikelihood;
      const double per_char = ll / static_cast<double>(code_points(question.choices[i]));
      if (ll > best) best = ll, q.prediction = static_cast<int64_t>(i);
      if (per_char > best_norm) best_norm = per_char, q.prediction_norm = static_cast<int64_t>(i);
    }
    correct.push_back(q.prediction == question.gold);
    correct_norm.push_back(q.prediction_norm == question.gold);
    task.per_question.push_back(std::move(q));
  }
  model->train(was_training);
  task.questions = static_cast<int64_t>(questions.size());
  std::tie(task.acc, task.acc_stderr) = mean_and_stderr(correct);
  std::tie(task.acc_norm, task.acc_norm_stderr) = mean_and_stderr(correct_norm);
  return task;
}

}  // namespace ffnshape::eval
