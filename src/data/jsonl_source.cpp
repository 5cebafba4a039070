// JSONL: one JSON object per non-blank line; the document is its string field options.text_field.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "corpus_source.h"
#include "ffnshape/train/data_error.h"
#include "line_reader.h"

namespace ffnshape::data {
namespace {

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c) != 0; });
}

std::string type_name(const nlohmann::json& value) {
  return value.is_null() ? "null" : std::string(value.type_name());
}

std::string field_list(const nlohmann::json& object) {
  std::string names;
  for (const auto& item : object.items()) {
    if (names.size() > 80) return names + ", ...";
    names += (names.empty() ? "" : ", ") + item.key();
  }
  return names.empty() ? "none" : names;
}

// The text of one parsed line, or the problem with it.
bool extract_text(const nlohmann::json& value, const std::string& field, std::string& text, std::string& problem) {
  if (!value.is_object()) {
    problem = "is a JSON " + type_name(value) + ", not an object\n  fix: each line must be an object such as {\"" +
              field + "\": \"...\"}";
    return false;
  }
  const auto found = value.find(field);
  if (found == value.end()) {
    problem = "has no field \"" + field + "\" (fields: " + field_list(value) +
              ")\n  fix: name the text field with --text-field, or pass --skip-bad to skip such lines";
    return false;
  }
  if (!found->is_string()) {
    problem = "field \"" + field + "\" is " + type_name(*found) +
              ", not a string\n  fix: name a string field with --text-field, or pass --skip-bad to skip such lines";
    return false;
  }
  text = found->get_ref<const std::string&>();
  return true;
}

class JsonlSource : public CorpusReader::Source {
 public:
  JsonlSource(const CorpusFile& file, CorpusReadOptions options)
      : path_(file.path), options_(std::move(options)), lines_(open_byte_stream(file.path)) {}

  bool next(CorpusEntry& entry, bool count_only) override {
    if (done_) return false;
    entry = CorpusEntry{};
    try {
      do {
        if (!lines_.next(line_)) {
          done_ = true;
          return false;
        }
      } while (is_blank(line_));
    } catch (const DataError& e) {  // a truncated or corrupt compressed file ends here
      done_ = true;
      entry = bad_file_entry(path_, e.what());
      const auto fix = entry.problem.find("\n  fix:");
      entry.problem.insert(fix == std::string::npos ? entry.problem.size() : fix,
                           ", after line " + std::to_string(lines_.line_number()));
      return true;
    }
    entry.origin = path_ + " line " + std::to_string(lines_.line_number());
    if (!count_only) parse(entry);
    return true;
  }

 private:
  void parse(CorpusEntry& entry) const {
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(line_);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number too large
      entry.kind = CorpusEntry::Kind::bad_document;
      std::string what = e.what();
      const auto detail = what.find("] ");
      entry.problem = "is not valid JSON (" + (detail == std::string::npos ? what : what.substr(detail + 2)) +
                      ")\n  fix: repair the line, or pass --skip-bad to skip such lines";
      return;
    }
    if (!extract_text(value, options_.text_field, entry.text, entry.problem)) {
      entry.kind = CorpusEntry::Kind::bad_document;
    }
  }

  std::string path_;
  CorpusReadOptions options_;
  LineReader lines_;
  std::string line_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<CorpusReader::Source> open_jsonl_source(const CorpusFile& file, const CorpusReadOptions& options) {
  return std::make_unique<JsonlSource>(file, options);
}

}  // namespace ffnshape::data
