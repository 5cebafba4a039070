// Corpus sources: the documents of plain-text, JSONL and Parquet files, streamed in a fixed order
// with a bounded read buffer, gzip- or zstd-compressed where the format allows (text and JSONL).
//
//   text     one document per file (.txt; .txt.gz, .txt.zst)
//   jsonl    one document per non-blank line, a JSON object whose string field holds the text
//            (.jsonl / .ndjson; .gz, .zst)
//   parquet  one document per row of a string column (.parquet; compressed inside the format)
//
// Every entry carries its origin ("FILE", "FILE line 12", "FILE row group 3 row 41") so that a bad
// one can be named. A bad document (a line that is not JSON, a missing or non-string field, a null
// row, an unreadable text file) still takes its place in the order; a bad file (a truncated .gz /
// .zst, a Parquet file without the column) ends that file's entries.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ffnshape {

enum class CorpusFormat { automatic, text, jsonl, parquet };

// "auto", "text", "jsonl", "parquet"; ConfigError for anything else.
CorpusFormat parse_corpus_format(const std::string& name);
const char* to_string(CorpusFormat format);

struct CorpusFile {
  std::string path;
  CorpusFormat format = CorpusFormat::text;  // never automatic
  uint64_t bytes = 0;                        // size on disk
};

// Files, folders (searched recursively for the formats' extensions, hidden files left out) and
// globs ("shards/*.jsonl.zst"), sorted by path without repeats. `format` other than automatic
// applies to every file and restricts folders to that format. DataError for a missing input, an
// empty result, or a combination the formats do not allow (a compressed Parquet file).
std::vector<CorpusFile> list_corpus_files(const std::vector<std::string>& inputs, CorpusFormat format);

struct CorpusEntry {
  enum class Kind { document, bad_document, bad_file };
  Kind kind = Kind::document;
  std::string text;     // the document (empty when counting)
  std::string origin;   // where it comes from
  std::string problem;  // for bad entries: what is wrong, then "\n  fix: ..."
};

struct CorpusReadOptions {
  std::string text_field = "text";  // JSONL field / Parquet column
  // Entries without text and without checking it: the same sequence of entries (a bad document is
  // reported as a document), cheaply -- text files are not opened, JSONL lines not parsed, Parquet
  // rows come from the metadata.
  bool count_only = false;
};

// The entries of a list of files, file after file.
class CorpusReader {
 public:
  CorpusReader(std::vector<CorpusFile> files, CorpusReadOptions options);
  ~CorpusReader();
  CorpusReader(const CorpusReader&) = delete;
  CorpusReader& operator=(const CorpusReader&) = delete;

  // The next entry; false after the last one.
  bool next(CorpusEntry& entry);
  // Passes over n entries as count_only would read them (to continue where an earlier reader
  // stopped); returns how many there were.
  uint64_t skip(uint64_t n);

  class Source;  // one file's entries (one implementation per format)

 private:
  bool read(CorpusEntry& entry, bool count_only);

  std::vector<CorpusFile> files_;
  CorpusReadOptions options_;
  size_t next_file_ = 0;
  std::unique_ptr<Source> current_;
};

}  // namespace ffnshape
