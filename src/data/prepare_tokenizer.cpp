// The tokenizer of a prepare: given (a file or a run folder), or trained on the training documents.
#include <filesystem>
#include <fstream>

#include "../common/log.h"
#include "byte_stream.h"
#include "dedup_set.h"
#include "prepare_run.h"
#include "tokenizer_choice.h"

namespace fs = std::filesystem;

namespace ffnshape::data {
namespace {

bool plain_text_files(const std::vector<CorpusFile>& files) {
  for (const auto& file : files) {
    if (file.format != CorpusFormat::text || compression_of(file.path) != Compression::none) return false;
  }
  return true;
}

// The training documents' text, in order, up to kTokenizerTrainingBytes, in one file.
std::string write_training_text(PrepareRun& run) {
  const auto path = (run.out / ".tokenizer-training.txt").string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  CorpusReader reader(run.files, {run.options.text_field, false});
  CorpusEntry entry;
  uint64_t ordinal = 0;
  size_t written = 0;
  while (written < kTokenizerTrainingBytes && reader.next(entry)) {
    if (entry.kind == CorpusEntry::Kind::bad_file) continue;
    const bool is_val = run.is_val[ordinal++];
    if (entry.kind == CorpusEntry::Kind::bad_document) {
      if (!run.options.skip_bad) throw DataError(entry.origin + ": " + entry.problem);
      continue;
    }
    if (is_val) continue;
    out << entry.text;
    if (entry.text.empty() || entry.text.back() != '\n') out << '\n';
    written += entry.text.size() + 1;
  }
  if (!out.flush()) throw DataError(path + ": cannot write\n  fix: check free space and permissions");
  return path;
}

Tokenizer train_tokenizer(PrepareRun& run) {
  const auto& o = run.options;
  const auto prefix = (run.out / "tokenizer").string();
  std::vector<std::string> texts;
  std::string temporary;
  if (plain_text_files(run.files)) {  // the documents themselves, as always
    for (size_t i = 0; i < run.files.size(); ++i) {
      if (!run.is_val[i]) texts.push_back(run.files[i].path);
    }
  } else {
    temporary = write_training_text(run);
    texts.push_back(temporary);
  }
  if (!o.quiet) log::info("training a {}-token BPE tokenizer on {} training documents{}", o.vocab_size,
                          temporary.empty() ? std::to_string(texts.size()) : std::string("the"),
                          temporary.empty() ? "" : " (their first 200 MB)");
  auto tokenizer = Tokenizer::train(texts, prefix, o.vocab_size, run.threads);
  if (!temporary.empty()) fs::remove(temporary);
  return tokenizer;
}

}  // namespace

Tokenizer choose_tokenizer(PrepareRun& run) {
  auto& state = run.state;
  if (run.options.tokenizer.empty()) {
    auto tokenizer = train_tokenizer(run);
    state.tokenizer_path = (run.out / "tokenizer.model").string();
    state.tokenizer_hash = file_fnv1a64(state.tokenizer_path);
    return tokenizer;
  }
  state.tokenizer_path = resolve_tokenizer_path(run.options.tokenizer);
  state.tokenizer_hash = file_fnv1a64(state.tokenizer_path);
  return Tokenizer::load(state.tokenizer_path);
}

void handle_bad_entry(PrepareRun& run, const CorpusEntry& entry) {
  const auto message = entry.origin + ": " + entry.problem;
  if (!run.options.skip_bad) throw DataError(message);
  auto& state = run.state;
  (entry.kind == CorpusEntry::Kind::bad_file ? state.skipped_files : state.skipped_documents) += 1;
  if (state.skipped_examples.size() < 10) {
    const auto summary = message.substr(0, message.find("\n  fix:"));
    state.skipped_examples.push_back(summary);
    if (!run.options.quiet) log::warn("skipped {}", summary);
  }
}

}  // namespace ffnshape::data
