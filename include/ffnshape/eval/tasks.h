// Zero-shot multiple-choice tasks in their published formats (JSON lines), turned into prompts
// exactly as lm-evaluation-harness's task definitions do:
//   arc        {"question", "choices": {"text": [...], "label": [...]}, "answerKey"} (ARC-Easy and
//              ARC-Challenge): context "Question: {question}\nAnswer:", choices the texts
//   hellaswag  {"activity_label", "ctx_a", "ctx_b", "endings", "label"}: context
//              preprocess(activity_label + ": " + ctx_a + " " + capitalize(ctx_b)), choices the
//              preprocessed endings (preprocess: strip, " [title]" -> ". ", drop "[...]", "  " -> " ")
//   piqa       {"goal", "sol1", "sol2", "label"}: context "Question: {goal}\nAnswer:", choices sol1, sol2
// Every choice is scored as the continuation " " + choice (the harness's target delimiter).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ffnshape::eval {

enum class TaskFormat { arc, hellaswag, piqa };

struct Question {
  std::string context;
  std::vector<std::string> choices;
  int64_t gold = 0;  // index of the right choice
};

// "arc" | "hellaswag" | "piqa".
TaskFormat parse_task_format(const std::string& name, const std::string& key = "--task-format");  // ConfigError naming key
// The format a file name implies (arc_easy.jsonl, hellaswag_val.jsonl, piqa.jsonl, ...); ConfigError
// when it implies none.
TaskFormat guess_task_format(const std::string& path);
const char* to_string(TaskFormat format);

// Reads every line of a task file; DataError naming the file and line for malformed JSON, missing
// fields or a gold answer that is not among the choices.
std::vector<Question> load_task(const std::string& path, TaskFormat format);

// lm-evaluation-harness's HellaSwag preprocessing and Python's str.capitalize (ASCII letters).
std::string hellaswag_preprocess(std::string text);
std::string capitalize(const std::string& text);

}  // namespace ffnshape::eval
