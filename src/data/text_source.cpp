// Plain text: each file is one document (decompressed when it ends in .gz or .zst).
#include "byte_stream.h"
#include "corpus_source.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::data {
namespace {

class TextSource : public CorpusReader::Source {
 public:
  TextSource(CorpusFile file, CorpusReadOptions options) : file_(std::move(file)), options_(std::move(options)) {}

  bool next(CorpusEntry& entry, bool count_only) override {
    if (done_) return false;
    done_ = true;
    entry = CorpusEntry{};
    entry.origin = file_.path;
    if (count_only) return true;
    try {
      auto stream = open_byte_stream(file_.path);
      char block[1 << 16];
      while (const size_t n = stream->read(block, sizeof block)) entry.text.append(block, n);
    } catch (const DataError& e) {
      entry = bad_file_entry(file_.path, e.what());
      entry.kind = CorpusEntry::Kind::bad_document;  // the file is the document: it keeps its place
      entry.text.clear();
    }
    return true;
  }

 private:
  CorpusFile file_;
  CorpusReadOptions options_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<CorpusReader::Source> open_text_source(const CorpusFile& file, const CorpusReadOptions& options) {
  return std::make_unique<TextSource>(file, options);
}

CorpusEntry bad_file_entry(const std::string& path, const std::string& message) {
  CorpusEntry entry;
  entry.kind = CorpusEntry::Kind::bad_file;
  entry.origin = path;
  // The DataErrors of the byte streams start with "PATH: "; the origin says it already.
  const std::string prefix = path + ": ";
  entry.problem = message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
  return entry;
}

}  // namespace ffnshape::data
