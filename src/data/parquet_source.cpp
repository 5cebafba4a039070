// Parquet through Apache Arrow's own reader (libparquet), one row group at a time in batches of
// rows, so memory holds one batch of the text column, never the file.
#include <algorithm>
#include <arrow/array.h>
#include <arrow/io/file.h>
#include <arrow/memory_pool.h>
#include <arrow/record_batch.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include "corpus_source.h"
#include "ffnshape/train/data_error.h"

namespace ffnshape::data {
namespace {

constexpr int64_t kRowsPerBatch = 1024;
constexpr const char* kReadFix = "\n  fix: check or rewrite the file, or pass --skip-bad to skip it";

template <class T>
T value_or_throw(arrow::Result<T> result, const std::string& path, const std::string& what) {
  if (!result.ok()) throw DataError(path + ": " + what + " (" + result.status().message() + ")" + kReadFix);
  return std::move(result).ValueOrDie();
}

class ParquetSource : public CorpusReader::Source {
 public:
  ParquetSource(const CorpusFile& file, CorpusReadOptions options) : path_(file.path), options_(std::move(options)) {
    try {
      auto input = value_or_throw(arrow::io::ReadableFile::Open(path_), path_, "cannot open the file");
      reader_ = value_or_throw(parquet::arrow::OpenFile(input, arrow::system_memory_pool()), path_,
                               "is not a readable Parquet file");
    } catch (const DataError&) {
      throw;
    } catch (const std::exception& e) {  // libparquet's own exceptions
      throw DataError(path_ + ": is not a readable Parquet file (" + e.what() + ")" + kReadFix);
    }
    reader_->set_batch_size(kRowsPerBatch);
    find_column();
    check_row_counts();
  }

  bool next(CorpusEntry& entry, bool count_only) override {
    while (row_ == rows_in_group_) {
      if (group_ + 1 >= reader_->num_row_groups()) return false;
      start_group(group_ + 1);
    }
    entry = CorpusEntry{};
    entry.origin = path_ + " row group " + std::to_string(group_) + " row " + std::to_string(row_);
    if (!count_only) fill(entry);
    ++row_;
    return true;
  }

 private:
  void find_column() {
    const auto& schema = *reader_->parquet_reader()->metadata()->schema();
    column_ = schema.ColumnIndex(options_.text_field);
    std::shared_ptr<arrow::Schema> arrow_schema;
    if (column_ >= 0 && reader_->GetSchema(&arrow_schema).ok()) {
      const auto field = arrow_schema->GetFieldByName(options_.text_field);
      const auto type = field ? field->type()->id() : arrow::Type::NA;
      if (type != arrow::Type::STRING && type != arrow::Type::LARGE_STRING && type != arrow::Type::STRING_VIEW) {
        throw DataError(path_ + ": column \"" + options_.text_field + "\" holds " +
                        (field ? field->type()->ToString() : std::string("nested values")) +
                        ", not strings\n  fix: name a string column with --text-field");
      }
      return;
    }
    std::string names;
    const int listed = std::min(schema.num_columns(), 20);  // a wide table's columns: the first 20 and a count
    for (int i = 0; i < listed; ++i) names += (i ? ", " : "") + schema.Column(i)->path()->ToDotString();
    if (schema.num_columns() > listed) names += ", ... " + std::to_string(schema.num_columns() - listed) + " more";
    throw DataError(path_ + ": has no column \"" + options_.text_field + "\" (columns: " + names +
                    ")\n  fix: name the text column with --text-field, or pass --skip-bad to skip such files");
  }

  // The footer's counts must agree: a row group claiming more rows than its text column holds values
  // (21,049,046,655 against 4, found by fuzz_parquet) would give bad rows without end, and a negative
  // count is never reached by counting rows up from 0. Every row of a flat column is one value, nulls
  // included.
  void check_row_counts() const {
    const auto metadata = reader_->parquet_reader()->metadata();
    int64_t total = 0;
    try {
      for (int group = 0; group < metadata->num_row_groups(); ++group) {
        const auto row_group = metadata->RowGroup(group);
        const int64_t rows = row_group->num_rows();
        const int64_t values = row_group->ColumnChunk(column_)->num_values();
        if (rows < 0) throw corrupt_footer("row group " + std::to_string(group) + " claims " + std::to_string(rows) + " rows");
        if (rows != values) {
          throw corrupt_footer("row group " + std::to_string(group) + " claims " + std::to_string(rows) +
                               " rows but its column \"" + options_.text_field + "\" holds " + std::to_string(values) +
                               " values");
        }
        if (__builtin_add_overflow(total, rows, &total)) throw corrupt_footer("the row groups claim more than 2^63 rows");
      }
    } catch (const DataError&) {
      throw;
    } catch (const std::exception& e) {  // libparquet's, on metadata it cannot parse
      throw DataError(path_ + ": is not a readable Parquet file (" + e.what() + ")" + kReadFix);
    }
    if (total != metadata->num_rows()) {
      throw corrupt_footer("the row groups hold " + std::to_string(total) + " rows but the file claims " +
                           std::to_string(metadata->num_rows()));
    }
  }

  DataError corrupt_footer(const std::string& what) const {
    return DataError(path_ + ": " + what + " (a corrupt footer)" + kReadFix);
  }

  void start_group(int group) {
    group_ = group;
    row_ = 0;
    rows_in_group_ = reader_->parquet_reader()->metadata()->RowGroup(group)->num_rows();
    batches_.reset();  // opened by the first row read in full
    batch_.reset();
    batch_start_ = 0;
    group_problem_.clear();
  }

  // The text of the current row, or why it has none (a null, or a row group that cannot be read:
  // every row of it is then a bad document, so the order of the other documents is kept).
  void fill(CorpusEntry& entry) {
    while (group_problem_.empty() && (!batch_ || row_ >= batch_start_ + batch_->length())) read_batch();
    if (!group_problem_.empty()) {
      entry.kind = CorpusEntry::Kind::bad_document;
      entry.problem = "row group " + std::to_string(group_) + " cannot be read (" + group_problem_ +
                      ")\n  fix: rewrite the file, or pass --skip-bad to skip its rows";
      return;
    }
    const int64_t i = row_ - batch_start_;
    if (batch_->IsNull(i)) {
      entry.kind = CorpusEntry::Kind::bad_document;
      entry.problem = "column \"" + options_.text_field + "\" is null\n  fix: pass --skip-bad to skip such rows";
      return;
    }
    switch (batch_->type_id()) {
      case arrow::Type::LARGE_STRING: entry.text = static_cast<const arrow::LargeStringArray&>(*batch_).GetString(i); break;
      case arrow::Type::STRING_VIEW: entry.text = std::string(static_cast<const arrow::StringViewArray&>(*batch_).GetView(i)); break;
      default: entry.text = static_cast<const arrow::StringArray&>(*batch_).GetString(i); break;
    }
  }

  void read_batch() {
    std::shared_ptr<arrow::RecordBatch> batch;
    try {
      if (!batches_) {
        auto opened = reader_->GetRecordBatchReader({group_}, {column_});
        if (!opened.ok()) {
          group_problem_ = opened.status().message();
          return;
        }
        batches_ = std::move(opened).ValueOrDie();
      }
      const auto status = batches_->ReadNext(&batch);
      if (!status.ok()) group_problem_ = status.message();
    } catch (const std::exception& e) {
      group_problem_ = e.what();
    }
    if (group_problem_.empty() && (!batch || batch->num_rows() == 0)) group_problem_ = "fewer rows than its metadata says";
    if (!group_problem_.empty()) return;
    if (batch_) batch_start_ += batch_->length();
    batch_ = batch->column(0);
  }

  std::string path_;
  CorpusReadOptions options_;
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  int column_ = -1;
  int group_ = -1;
  int64_t row_ = 0, rows_in_group_ = 0;
  std::unique_ptr<arrow::RecordBatchReader> batches_;
  std::shared_ptr<arrow::Array> batch_;
  int64_t batch_start_ = 0;  // row of the group where batch_ starts
  std::string group_problem_;
};

}  // namespace

std::unique_ptr<CorpusReader::Source> open_parquet_source(const CorpusFile& file, const CorpusReadOptions& options) {
  return std::make_unique<ParquetSource>(file, options);
}

}  // namespace ffnshape::data
