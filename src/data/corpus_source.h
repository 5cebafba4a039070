// Internal: one file's corpus entries, one implementation per format.
#pragma once

#include <memory>

#include "ffnshape/data/corpus.h"

namespace ffnshape {

class CorpusReader::Source {
 public:
  virtual ~Source() = default;
  // The next entry of this file; false after its last one. count_only: see CorpusReadOptions.
  virtual bool next(CorpusEntry& entry, bool count_only) = 0;
};

namespace data {

std::unique_ptr<CorpusReader::Source> open_text_source(const CorpusFile& file, const CorpusReadOptions& options);
std::unique_ptr<CorpusReader::Source> open_jsonl_source(const CorpusFile& file, const CorpusReadOptions& options);
// Built without Arrow's Parquet library, this throws DataError saying so.
std::unique_ptr<CorpusReader::Source> open_parquet_source(const CorpusFile& file, const CorpusReadOptions& options);

// A bad-file entry, whose problem comes from a DataError's message "PATH: problem\n  fix: ...".
CorpusEntry bad_file_entry(const std::string& path, const std::string& message);

}  // namespace data
}  // namespace ffnshape
