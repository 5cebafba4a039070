// Stands in for parquet_source.cpp in builds without Arrow's Parquet library.
#include "corpus_source.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::data {

std::unique_ptr<CorpusReader::Source> open_parquet_source(const CorpusFile& file, const CorpusReadOptions&) {
  throw DataError(file.path + ": this ffnshape was built without Parquet support\n"
                  "  fix: install pyarrow in the project's virtual environment (scripts/setup.sh) and rebuild, "
                  "or convert the file to JSONL");
}

}  // namespace ffnshape::data
