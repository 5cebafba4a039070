// Corpus sources: text, JSONL and Parquet readers, gzip / zstd, bad input named by file and line,
// the document split by ordinal, and prepare's equality across formats, skip-bad and resume.
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "../src/data/document_split.h"
#include "ffnshape/data/corpus.h"
#include "ffnshape/data/prepare.h"
#include "ffnshape/train/data_error.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace ffnshape;

namespace {

void write(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string gzip_bytes(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // + 16: a gzip header
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string zstd_bytes(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  return out;
}

struct Read {
  std::vector<CorpusEntry> entries;
  std::string error;
};

Read read_all(const std::vector<std::string>& inputs, CorpusReadOptions options = {}) {
  Read read;
  try {
    CorpusReader reader(list_corpus_files(inputs, CorpusFormat::automatic), options);
    CorpusEntry entry;
    while (reader.next(entry)) read.entries.push_back(entry);
  } catch (const DataError& e) {
    read.error = e.what();
  }
  return read;
}

std::string jsonl_of(const std::vector<std::string>& texts) {
  std::string out;
  for (const auto& text : texts) out += nlohmann::json({{"text", text}, {"id", 7}}).dump() + "\n";
  return out;
}

const std::vector<std::string> kTexts = {"first document", "second\nwith a newline", "", "ünïcödé ✓"};

}  // namespace

TEST(Corpus, JsonlPlainGzipAndZstdReadTheSameDocuments) {
  ffnshape::testing::TempDir dir("ffnshape_corpus");
  const auto jsonl = jsonl_of(kTexts) + "\n  \n";  // blank lines are not documents
  write(dir.path() / "a.jsonl", jsonl);
  write(dir.path() / "b.jsonl.gz", gzip_bytes(jsonl) + gzip_bytes(jsonl));  // two gzip members
  write(dir.path() / "c.jsonl.zst", zstd_bytes(jsonl));
  for (const auto* name : {"a.jsonl", "b.jsonl.gz", "c.jsonl.zst"}) {
    const auto read = read_all({(dir.path() / name).string()});
    ASSERT_EQ(read.error, "") << name;
    const size_t copies = std::string(name) == "b.jsonl.gz" ? 2 : 1;
    ASSERT_EQ(read.entries.size(), kTexts.size() * copies) << name;
    for (size_t i = 0; i < read.entries.size(); ++i) {
      EXPECT_EQ(read.entries[i].kind, CorpusEntry::Kind::document);
      EXPECT_EQ(read.entries[i].text, kTexts[i % kTexts.size()]) << name;
    }
    EXPECT_NE(read.entries[1].origin.find(std::string(name) + " line 2"), std::string::npos);
  }
}

TEST(Corpus, TextFilesAreWholeDocumentsInPathOrder) {
  ffnshape::testing::TempDir dir("ffnshape_corpus");
  fs::create_directories(dir.path() / "docs");
  write(dir.path() / "docs" / "b.txt", "bee");
  write(dir.path() / "docs" / "a.txt.zst", zstd_bytes("ay\nline two"));
  write(dir.path() / "docs" / ".hidden.txt", "no");
  write(dir.path() / "docs" / "notes.md", "not a corpus file");
  const auto read = read_all({(dir.path() / "docs").string()});
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_EQ(read.entries[0].text, "ay\nline two");
  EXPECT_EQ(read.entries[1].text, "bee");
  const auto counted = read_all({(dir.path() / "docs").string()}, {"text", true});
  EXPECT_EQ(counted.entries.size(), 2u);
  EXPECT_EQ(counted.entries[0].text, "");  // counting opens no file
}

TEST(Corpus, BadLinesAreNamedByFileAndLine) {
  ffnshape::testing::TempDir dir("ffnshape_corpus");
  write(dir.path() / "bad.jsonl", "{\"text\": \"ok\"}\nnot json\n{\"content\": \"x\"}\n{\"text\": 5}\n[1]\n");
  const auto read = read_all({(dir.path() / "bad.jsonl").string()});
  ASSERT_EQ(read.entries.size(), 5u);
  const char* expected[] = {"is not valid JSON", "has no field \"text\" (fields: content)", "field \"text\" is number",
                            "is a JSON array"};
  for (int i = 0; i < 4; ++i) {
    const auto& entry = read.entries[static_cast<size_t>(i) + 1];
    EXPECT_EQ(entry.kind, CorpusEntry::Kind::bad_document);
    EXPECT_NE(entry.origin.find("bad.jsonl line " + std::to_string(i + 2)), std::string::npos) << entry.origin;
    EXPECT_NE(entry.problem.find(expected[i]), std::string::npos) << entry.problem;
    EXPECT_NE(entry.problem.find("fix:"), std::string::npos);
  }
}

TEST(Corpus, TruncatedAndUnreadableFilesAreBadFiles) {
  ffnshape::testing::TempDir dir("ffnshape_corpus");
  std::string many;
  for (int i = 0; i < 2000; ++i) many += jsonl_of({"document number " + std::to_string(i)});
  const auto gz = gzip_bytes(many), zst = zstd_bytes(many);
  write(dir.path() / "t.jsonl.gz", gz.substr(0, gz.size() / 2));
  write(dir.path() / "t.jsonl.zst", zst.substr(0, zst.size() / 2));
  write(dir.path() / "garbage.jsonl.zst", "this is not zstd");
  for (const auto* name : {"t.jsonl.gz", "t.jsonl.zst", "garbage.jsonl.zst"}) {
    for (const bool count_only : {false, true}) {  // both readings end the same way
      const auto read = read_all({(dir.path() / name).string()}, {"text", count_only});
      ASSERT_FALSE(read.entries.empty());
      const auto& last = read.entries.back();
      EXPECT_EQ(last.kind, CorpusEntry::Kind::bad_file) << name;
      EXPECT_NE(last.origin.find(name), std::string::npos);
      EXPECT_TRUE(last.problem.find("truncated") != std::string::npos || last.problem.find("not valid zstd") != std::string::npos)
          << last.problem;
    }
  }
  // A text file that cannot be opened keeps its place as a bad document.
  CorpusReader reader({{(dir.path() / "gone.txt").string(), CorpusFormat::text, 0}}, {});
  CorpusEntry entry;
  ASSERT_TRUE(reader.next(entry));
  EXPECT_EQ(entry.kind, CorpusEntry::Kind::bad_document);
  EXPECT_NE(entry.problem.find("cannot open"), std::string::npos);
}

TEST(Corpus, MissingInputsAndCompressedParquetAreRefused) {
  ffnshape::testing::TempDir dir("ffnshape_corpus");
  EXPECT_THROW(list_corpus_files({(dir.path() / "missing.jsonl").string()}, CorpusFormat::automatic), DataError);
  EXPECT_THROW(list_corpus_files({(dir.path() / "*.jsonl").string()}, CorpusFormat::automatic), DataError);
  write(dir.path() / "x.parquet.gz", "x");
  EXPECT_THROW(list_corpus_files({(dir.path() / "x.parquet.gz").string()}, CorpusFormat::automatic), DataError);
  write(dir.path() / "a.jsonl", "{}\n");
  write(dir.path() / "b.jsonl", "{}\n");
  EXPECT_EQ(list_corpus_files({(dir.path() / "*.jsonl").string()}, CorpusFormat::automatic).size(), 2u);
}

TEST(Corpus, SplitByOrdinalEqualsTheShuffleOfPaths) {
  for (const uint64_t n : {2u, 20u, 1001u}) {
    std::vector<std::string> paths;
    for (uint64_t i = 0; i < n; ++i) paths.push_back("doc" + std::to_string(100000 + i));
    std::mt19937_64 generator(9);
    std::shuffle(paths.begin(), paths.end(), generator);
    const auto n_val = static_cast<size_t>(std::max<long long>(1, std::llround(0.2 * static_cast<double>(n))));
    const auto is_val = data::validation_documents(n, 0.2, 9);
    for (size_t i = 0; i < n_val; ++i) EXPECT_TRUE(is_val[std::stoul(paths[i].substr(3)) - 100000]);
    EXPECT_EQ(static_cast<size_t>(std::count(is_val.begin(), is_val.end(), true)), n_val);
  }
  EXPECT_THROW(data::validation_documents(1, 0.5, 0), DataError);
}

namespace {

struct TwoCorpora {
  ffnshape::testing::TempDir dir{"ffnshape_prepare_corpus"};
  std::vector<std::string> texts;
  TwoCorpora() {
    const char* words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far"};
    std::mt19937 gen(3);
    fs::create_directories(dir.path() / "txt");
    for (int d = 0; d < 60; ++d) {
      std::string text;
      for (int w = 0; w < 40 + d; ++w) text += std::string(words[gen() % 10]) + (w % 9 == 8 ? ".\n" : " ");
      if (d % 10 == 3) text = texts[0];  // an exact duplicate
      texts.push_back(text);
      char name[32];
      std::snprintf(name, sizeof name, "doc%03d.txt", d);
      write(dir.path() / "txt" / name, text);
    }
    write(dir.path() / "c.jsonl.zst", zstd_bytes(jsonl_of(texts)));
  }
  PrepareOptions options(const std::string& input, const std::string& out) const {
    PrepareOptions o;
    o.inputs = {(dir.path() / input).string()};
    o.out_dir = (dir.path() / out).string();
    o.vocab_size = 300;
    o.val_fraction = 0.2;
    o.seed = 4;
    o.shard_tokens = 900;
    o.threads = 2;
    o.quiet = true;
    return o;
  }
};

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(PrepareCorpus, JsonlZstGivesTheShardsOfTheTextFiles) {
  TwoCorpora c;
  const auto from_txt = prepare_data(c.options("txt", "a"));
  auto options = c.options("c.jsonl.zst", "b");
  options.tokenizer = from_txt.tokenizer_path;
  const auto from_jsonl = prepare_data(options);
  ASSERT_EQ(from_txt.shards.size(), from_jsonl.shards.size());
  for (size_t i = 0; i < from_txt.shards.size(); ++i) {
    EXPECT_EQ(file_bytes(from_txt.shards[i]), file_bytes(from_jsonl.shards[i])) << from_txt.shards[i];
  }
  EXPECT_EQ(from_txt.val_documents, 12);
  std::ifstream meta_file(c.dir.path() / "b" / "meta.json");
  const auto meta = nlohmann::json::parse(meta_file);
  EXPECT_EQ(meta.at("tokenizer_kind"), "sentencepiece");
  EXPECT_EQ(meta.at("sources").at("formats"), nlohmann::json::array({"jsonl"}));
  EXPECT_EQ(meta.at("val_documents").size(), 12u);
}

TEST(PrepareCorpus, DedupAndMaxTokensAreReported) {
  TwoCorpora c;
  auto options = c.options("c.jsonl.zst", "d");
  options.dedup = true;
  const auto r = prepare_data(options);
  EXPECT_EQ(r.duplicate_documents, 6);
  EXPECT_EQ(r.train_documents + r.val_documents, 54);
  options.out_dir = (c.dir.path() / "m").string();
  options.dedup = false;
  options.max_tokens = 1000;
  options.tokenizer = r.tokenizer_path;
  const auto capped = prepare_data(options);
  EXPECT_LE(capped.train_tokens + capped.val_tokens, 1000);
  EXPECT_GT(capped.train_tokens + capped.val_tokens, 800);
  std::ifstream meta_file(c.dir.path() / "m" / "meta.json");
  EXPECT_TRUE(nlohmann::json::parse(meta_file).at("max_tokens_reached").get<bool>());
}

TEST(PrepareCorpus, BadInputStopsOrIsSkipped) {
  TwoCorpora c;
  write(c.dir.path() / "bad.jsonl", jsonl_of({"one", "two"}) + "{\"text\": null}\n" + jsonl_of({"three"}));
  auto options = c.options("bad.jsonl", "bad");
  options.val_fraction = 0;
  options.tokenizer = prepare_data(c.options("txt", "tok")).tokenizer_path;
  try {
    prepare_data(options);
    ADD_FAILURE() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl line 3: field \"text\" is null"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(c.dir.path() / "bad" / "meta.json"));
  options.skip_bad = true;
  const auto r = prepare_data(options);
  EXPECT_EQ(r.skipped_documents, 1);
  EXPECT_EQ(r.train_documents, 3);
}

// Found by fuzz_parquet: a row group whose footer claims a negative row count was never reached by
// counting rows up from 0, and one claiming 21,049,046,655 rows in a file of 4 gave bad rows without
// end (a hang with --skip-bad). Now each is one bad file.
TEST(Corpus, ParquetFooterWithImpossibleRowCountsIsABadFile) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"negative_row_count.parquet", "claims -2440 rows (a corrupt footer)"},
      {"negative_row_count_one.parquet", "rows (a corrupt footer)"},
      {"rows_beyond_column_values.parquet",
       "row group 0 claims 21049046655 rows but its column \"text\" holds 4 values (a corrupt footer)"}};
  for (const auto& [name, message] : cases) {
    const std::string path = std::string(FFNSHAPE_SOURCE_DIR) + "/tests/fuzz/regressions/fuzz_parquet/" + name;
    for (const bool count_only : {false, true}) {
      CorpusReadOptions options;
      options.count_only = count_only;
      CorpusReader reader(list_corpus_files({path}, CorpusFormat::parquet), options);
      std::vector<CorpusEntry> entries;
      CorpusEntry entry;
      while (entries.size() < 100 && reader.next(entry)) entries.push_back(entry);
      ASSERT_EQ(entries.size(), 1u) << name;
      EXPECT_EQ(entries[0].kind, CorpusEntry::Kind::bad_file) << name;
      EXPECT_NE(entries[0].problem.find(message), std::string::npos) << entries[0].problem;
    }
  }
}
