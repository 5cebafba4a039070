#include "ffnshape/eval/tasks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "ffnshape/config/config_error.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::eval {
namespace {

std::string strip(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\n\r\f\v");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\n\r\f\v") - first + 1);
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// A label given as an integer or as a string holding one (HellaSwag's "label": "2").
int64_t integer_label(const nlohmann::json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::stoll(value.get<std::string>());
}

Question arc_question(const nlohmann::json& doc) {
  Question q;
  q.context = "Question: " + doc.at("question").get<std::string>() + "\nAnswer:";
  q.choices = doc.at("choices").at("text").get<std::vector<std::string>>();
  const auto labels = doc.at("choices").at("label").get<std::vector<std::string>>();
  const auto key = doc.at("answerKey").get<std::string>();
  q.gold = std::find(labels.begin(), labels.end(), key) - labels.begin();
  return q;
}

Question hellaswag_question(const nlohmann::json& doc) {
  Question q;
  const auto ctx = doc.at("ctx_a").get<std::string>() + " " + capitalize(doc.at("ctx_b").get<std::string>());
  q.context = hellaswag_preprocess(doc.at("activity_label").get<std::string>() + ": " + ctx);
  for (const auto& ending : doc.at("endings")) q.choices.push_back(hellaswag_preprocess(ending.get<std::string>()));
  q.gold = integer_label(doc.at("label"));
  return q;
}

Question piqa_question(const nlohmann::json& doc) {
  Question q;
  q.context = "Question: " + doc.at("goal").get<std::string>() + "\nAnswer:";
  q.choices = {doc.at("sol1").get<std::string>(), doc.at("sol2").get<std::string>()};
  q.gold = integer_label(doc.at("label"));
  return q;
}

}  // namespace

std::string capitalize(const std::string& text) {
  std::string out = text;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    out[i] = static_cast<char>(i == 0 ? std::toupper(c) : std::tolower(c));
  }
  return out;
}

std::string hellaswag_preprocess(std::string text) {
  text = replace_all(strip(text), " [title]", ". ");
  // re.sub("\\[.*?\\]", "", text): drop every bracketed span, shortest match first.
  std::string kept;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto close = text[i] == '[' ? text.find(']', i + 1) : std::string::npos;
    if (close == std::string::npos) {
      kept += text[i];
    } else {
      i = close;
    }
  }
  // str.replace("  ", " "): one left-to-right pass, as in Python.
  std::string out;
  for (size_t i = 0; i < kept.size(); ++i) {
    out += kept[i];
    if (kept[i] == ' ' && i + 1 < kept.size() && kept[i + 1] == ' ') ++i;
  }
  return out;
}

TaskFormat parse_task_format(const std::string& name, const std::string& key) {
  if (name == "arc") return TaskFormat::arc;
  if (name == "hellaswag") return TaskFormat::hellaswag;
  if (name == "piqa") return TaskFormat::piqa;
  throw ConfigError(key, "is '" + name + "'", "use arc, hellaswag or piqa");
}

TaskFormat guess_task_format(const std::string& path) {
  auto name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  for (auto format : {TaskFormat::arc, TaskFormat::hellaswag, TaskFormat::piqa}) {
    if (name.find(to_string(format)) != std::string::npos) return format;
  }
  throw ConfigError("--task-format", "is not given and '" + path + "' does not name a known task",
                    "pass --task-format arc, hellaswag or piqa");
}

const char* to_string(TaskFormat format) {
  switch (format) {
    case TaskFormat::arc: return "arc";
    case TaskFormat::hellaswag: return "hellaswag";
    case TaskFormat::piqa: return "piqa";
  }
  return "?";
}

std::vector<Question> load_task(const std::string& path, TaskFormat format) {
  std::ifstream in(path);
  if (!in) throw DataError(path + ": cannot be opened\n  fix: check the task file's path");
  std::vector<Question> questions;
  int64_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (strip(line).empty()) continue;
    const auto where = path + ":" + std::to_string(line_number);
    try {
      const auto doc = nlohmann::json::parse(line);
      Question q = format == TaskFormat::arc         ? arc_question(doc)
                   : format == TaskFormat::hellaswag ? hellaswag_question(doc)
                                                     : piqa_question(doc);
      if (q.gold < 0 || q.gold >= static_cast<int64_t>(q.choices.size())) {
        throw DataError(where + ": the answer is not one of the " + std::to_string(q.choices.size()) + " choices");
      }
      questions.push_back(std::move(q));
    } catch (const nlohmann::json::exception& e) {
      throw DataError(where + ": not a record of the " + std::string(to_string(format)) + " format (" + e.what() +
                      ")\n  fix: use the published format (see include/ffnshape/eval/tasks.h) or the right --task-format");
    } catch (const std::logic_error& e) {  // std::stoll on a label that is no number
      throw DataError(where + ": bad label (" + e.what() + ")\n  fix: labels are integers");
    }
  }
  if (questions.empty()) throw DataError(path + ": holds no questions\n  fix: one JSON record per line");
  return questions;
}

}  // namespace ffnshape::eval
