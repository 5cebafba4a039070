// Corpus files of `data prepare`: JSONL and text, plain, gzip or zstd (the first byte picks the kind,
// the rest is the file). Every entry is a document or a bad entry with a reason, never an exception
// the reader did not mean; and the cheap count_only pass (used to resume) sees the same entries.
#include "fuzz_support.h"
#include "ffnshape/data/corpus.h"

#include <iterator>

namespace {

constexpr uint64_t kMaxEntries = 10000;

const char* const kNames[] = {"corpus.jsonl", "corpus.jsonl.gz", "corpus.jsonl.zst", "corpus.txt.gz",
                              "corpus.txt.zst", "corpus.txt"};

uint64_t read_all(const std::string& path, bool count_only) {
  ffnshape::CorpusReadOptions options;
  options.count_only = count_only;
  ffnshape::CorpusReader reader(ffnshape::list_corpus_files({path}, ffnshape::CorpusFormat::automatic), options);
  ffnshape::CorpusEntry entry;
  uint64_t entries = 0;
  // At most kMaxEntries: a small valid file can hold millions of entries (null rows, empty lines),
  // which would only slow the search down.
  while (entries < kMaxEntries && reader.next(entry)) {
    if (entry.kind != ffnshape::CorpusEntry::Kind::document && entry.problem.empty()) std::abort();
    ++entries;
  }
  return entries;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = fuzz::write_file(kNames[data[0] % std::size(kNames)], data + 1, size - 1);
  fuzz::expect_clean_errors([&] {
    const uint64_t read = read_all(path, false);
    const uint64_t counted = read_all(path, true);
    if (read != counted) std::abort();
  });
  return 0;
}
