// Parquet corpora (read with pyarrow's libparquet, not instrumented): the footer, schema and row
// groups of a file, whose `text` column's rows become documents or bad entries with a reason; the
// count_only pass (row counts from the metadata) sees as many entries.
#include "fuzz_support.h"
#include "ffnshape/data/corpus.h"

namespace {

constexpr uint64_t kMaxEntries = 2000;

uint64_t read_all(const std::string& path, bool count_only) {
  ffnshape::CorpusReadOptions options;
  options.count_only = count_only;
  ffnshape::CorpusReader reader(ffnshape::list_corpus_files({path}, ffnshape::CorpusFormat::parquet), options);
  ffnshape::CorpusEntry entry;
  uint64_t entries = 0;
  // At most kMaxEntries: a small valid file can hold millions of entries (null rows, empty lines),
  // which would only slow the search down (10,000 in both passes took 171 ms under ASan, near the
  // 1 s hang limit on a busy host).
  while (entries < kMaxEntries && reader.next(entry)) {
    if (entry.kind != ffnshape::CorpusEntry::Kind::document && entry.problem.empty()) std::abort();
    ++entries;
  }
  return entries;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("corpus.parquet", data, size);
  fuzz::expect_clean_errors([&] {
    const uint64_t read = read_all(path, false);
    if (read_all(path, true) != read) std::abort();
  });
  return 0;
}
