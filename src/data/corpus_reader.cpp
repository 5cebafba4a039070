#include "corpus_source.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape {

CorpusReader::CorpusReader(std::vector<CorpusFile> files, CorpusReadOptions options)
    : files_(std::move(files)), options_(std::move(options)) {}

CorpusReader::~CorpusReader() = default;

bool CorpusReader::next(CorpusEntry& entry) { return read(entry, options_.count_only); }

uint64_t CorpusReader::skip(uint64_t n) {
  CorpusEntry entry;
  uint64_t skipped = 0;
  while (skipped < n && read(entry, true)) ++skipped;
  return skipped;
}

bool CorpusReader::read(CorpusEntry& entry, bool count_only) {
  while (true) {
    if (current_ && current_->next(entry, count_only)) return true;
    current_.reset();
    if (next_file_ == files_.size()) return false;
    const auto& file = files_[next_file_++];
    try {
      switch (file.format) {
        case CorpusFormat::jsonl: current_ = data::open_jsonl_source(file, options_); break;
        case CorpusFormat::parquet: current_ = data::open_parquet_source(file, options_); break;
        default: current_ = data::open_text_source(file, options_); break;
      }
    } catch (const DataError& e) {  // unreadable, or not a file of its format
      entry = data::bad_file_entry(file.path, e.what());
      return true;
    }
  }
}

}  // namespace ffnshape
