// `data prepare`: count the corpus, choose the split, get a tokenizer, then stream documents in
// order through the tokenizer into train and validation shards, saving resume points on the way.
#include "ffnshape/data/prepare.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include "../common/log.h"
#include "dedup_set.h"
#include "document_split.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/train/data_error.h"
#include "prepare_run.h"
#include "shard_series.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace ffnshape {
namespace data {
namespace {

constexpr size_t kChunkDocuments = 256;              // encoded together across threads
constexpr size_t kChunkBytes = size_t{16} << 20;      // ... or fewer, when documents are long
constexpr size_t kListedValDocuments = 10000;         // validation origins named in meta.json
constexpr double kCheckpointSeconds = 30, kProgressSeconds = 5;

int64_t env_int(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoll(value) : fallback;
}

void check_options(const PrepareOptions& o) {
  if (!(o.val_fraction >= 0 && o.val_fraction < 1)) {
    throw ConfigError("--val-fraction", "must be in [0, 1)", "e.g. 0.05 for 5% of the documents");
  }
  if (o.shard_tokens < 1 || o.shard_tokens > std::numeric_limits<int32_t>::max()) {
    throw ConfigError("--shard-tokens", "must be in [1, 2^31)", "e.g. 100000000");
  }
  if (o.max_tokens < 0) throw ConfigError("--max-tokens", "must not be negative", "0 means no limit");
  if (o.out_dir.empty()) throw ConfigError("--out", "is empty", "give the output folder");
  if (o.text_field.empty()) throw ConfigError("--text-field", "is empty", "e.g. text");
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

uint64_t count_documents(PrepareRun& run) {
  if (!run.options.quiet) log::info("counting the documents of {} file(s)", run.files.size());
  CorpusReader reader(run.files, {run.options.text_field, true});
  CorpusEntry entry;
  uint64_t documents = 0;
  while (reader.next(entry)) {
    if (entry.kind != CorpusEntry::Kind::bad_file) ++documents;
    else if (!run.options.skip_bad) throw DataError(entry.origin + ": " + entry.problem);  // counted later
  }
  if (documents == 0) throw DataError("the inputs hold no document\n  fix: check the files and --text-field");
  return documents;
}

struct Chunk {
  std::vector<std::string> texts, origins;
  std::vector<char> is_val;
  size_t bytes = 0;
};

// Reads up to one chunk of documents; false when the corpus ended.
bool gather(PrepareRun& run, CorpusReader& reader, DedupSet* dedup, Chunk& chunk) {
  auto& state = run.state;
  CorpusEntry entry;
  while (chunk.texts.size() < kChunkDocuments && chunk.bytes < kChunkBytes) {
    if (!reader.next(entry)) return false;
    ++state.position;
    if (entry.kind == CorpusEntry::Kind::bad_file) {
      handle_bad_entry(run, entry);
      continue;
    }
    if (state.ordinal >= run.is_val.size()) {
      throw DataError(entry.origin + ": more documents than counted (did the file change?)\n  fix: prepare again");
    }
    const bool is_val = run.is_val[state.ordinal++];
    if (entry.kind == CorpusEntry::Kind::bad_document) {
      handle_bad_entry(run, entry);
    } else if (dedup && !dedup->insert(entry.text)) {
      ++state.duplicates;
    } else {
      chunk.bytes += entry.text.size();
      chunk.texts.push_back(std::move(entry.text));
      chunk.origins.push_back(std::move(entry.origin));
      chunk.is_val.push_back(is_val);
    }
  }
  return true;
}

// Encodes and writes a chunk; false once --max-tokens is reached.
bool write_chunk(PrepareRun& run, const Tokenizer& tokenizer, const Chunk& chunk, ShardSeries& train, ShardSeries& val) {
  auto& state = run.state;
  const auto eos = static_cast<uint32_t>(tokenizer.eos_id());
  auto encoded = tokenizer.encode_batch(chunk.texts, run.threads);
  for (size_t i = 0; i < encoded.size(); ++i) {
    auto& ids = encoded[i];
    ids.push_back(eos);
    const auto n = static_cast<int64_t>(ids.size());
    if (run.options.max_tokens > 0 && state.train.tokens + state.val.tokens + n > run.options.max_tokens) {
      state.max_tokens_reached = true;
      return false;
    }
    auto& split = chunk.is_val[i] ? state.val : state.train;
    (chunk.is_val[i] ? val : train).append(ids);
    split.tokens += n;
    ++split.documents;
    if (chunk.is_val[i] && state.val_origins.size() < kListedValDocuments) state.val_origins.push_back(chunk.origins[i]);
  }
  return true;
}

void checkpoint(PrepareRun& run, ShardSeries& train, ShardSeries& val, DedupSet* dedup) {
  train.sync();
  val.sync();
  if (dedup) dedup->sync();
  auto& state = run.state;
  state.train.shards = train.index();
  state.train.in_shard = train.in_shard();
  state.val.shards = val.index();
  state.val.in_shard = val.in_shard();
  state.dedup_hashes = dedup ? dedup->size() : 0;
  save_state(run.state_path(), state);
}

void log_progress(const PrepareRun& run, Clock::time_point start, uint64_t first_ordinal, double bytes) {
  const auto& s = run.state;
  const double seconds = std::max(seconds_since(start), 1e-9);
  const double rate = static_cast<double>(s.ordinal - first_ordinal) / seconds;
  const double eta = rate > 0 ? static_cast<double>(s.documents - s.ordinal) / rate : 0;
  log::info("prepare: {}/{} documents ({:.1f}%), {} tokens, {:.1f} MB/s, ETA {:.0f} s", s.ordinal, s.documents,
            100.0 * static_cast<double>(s.ordinal) / static_cast<double>(s.documents), s.train.tokens + s.val.tokens,
            bytes / seconds / 1e6, eta);
}

// Streams the documents from the saved position to the end; returns the shard paths.
std::vector<std::string> stream_documents(PrepareRun& run, const Tokenizer& tokenizer, bool resumed) {
  const auto& o = run.options;
  const auto vocab = tokenizer.vocab_size();
  ShardSeries train(run.out.string(), "train", o.shard_tokens, vocab), val(run.out.string(), "val", o.shard_tokens, vocab);
  std::unique_ptr<DedupSet> dedup;
  if (o.dedup) dedup = std::make_unique<DedupSet>(run.dedup_log_path(), resumed ? run.state.dedup_hashes : 0);
  CorpusReader reader(run.files, {o.text_field, false});
  if (resumed) {
    train.resume(run.state.train.shards, run.state.train.in_shard);
    val.resume(run.state.val.shards, run.state.val.in_shard);
    reader.skip(run.state.position);
  }
  const int64_t checkpoint_every = env_int("FFNSHAPE_PREPARE_CHECKPOINT_EVERY", 100000);
  const auto stop_after = static_cast<uint64_t>(env_int("FFNSHAPE_PREPARE_STOP_AFTER", 0));
  const auto start = Clock::now();
  auto last_checkpoint = start, last_progress = start;
  uint64_t checkpoint_ordinal = run.state.ordinal;
  const uint64_t first_ordinal = run.state.ordinal;
  double bytes = 0;
  bool more = true;
  while (more) {
    Chunk chunk;
    more = gather(run, reader, dedup.get(), chunk);
    bytes += static_cast<double>(chunk.bytes);
    if (!write_chunk(run, tokenizer, chunk, train, val)) break;
    if (static_cast<int64_t>(run.state.ordinal - checkpoint_ordinal) >= checkpoint_every ||
        seconds_since(last_checkpoint) >= kCheckpointSeconds) {
      checkpoint(run, train, val, dedup.get());
      last_checkpoint = Clock::now();
      checkpoint_ordinal = run.state.ordinal;
    }
    if (stop_after > 0 && run.state.ordinal >= stop_after) ::kill(::getpid(), SIGKILL);  // tests: die mid-way
    if (!o.quiet && seconds_since(last_progress) >= kProgressSeconds) {
      log_progress(run, start, first_ordinal, bytes);
      last_progress = Clock::now();
    }
  }
  train.finish();
  val.finish();
  std::vector<std::string> shards;
  for (int i = 0; i < train.index(); ++i) shards.push_back(train.path(i));
  for (int i = 0; i < val.index(); ++i) shards.push_back(val.path(i));
  return shards;
}

void start_fresh(const PrepareRun& run) {
  fs::remove(run.out / "meta.json");
  fs::remove(run.state_path());
  fs::remove(run.dedup_log_path());
  remove_shards(run.out.string(), "train");
  remove_shards(run.out.string(), "val");
}

}  // namespace
}  // namespace data

PrepareResult prepare_data(const PrepareOptions& options) {
  data::check_options(options);
  data::PrepareRun run{options, options.out_dir, list_corpus_files(options.inputs, options.format), {}, {}, 1};
  run.threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  fs::create_directories(run.out);
  const auto fingerprint = data::make_fingerprint(options, run.files);
  auto saved = data::load_state(run.state_path(), fingerprint, options.quiet);
  if (saved && (!fs::exists(saved->tokenizer_path) || data::file_fnv1a64(saved->tokenizer_path) != saved->tokenizer_hash)) {
    if (!options.quiet) log::warn("the tokenizer of the interrupted prepare changed: starting over");
    saved.reset();
  }
  std::optional<Tokenizer> tokenizer;
  if (saved) {
    run.state = std::move(*saved);
    run.is_val = data::validation_documents(run.state.documents, options.val_fraction, options.seed);
    tokenizer = Tokenizer::load(run.state.tokenizer_path);
    if (!options.quiet) log::info("continuing an interrupted prepare at document {}/{}", run.state.ordinal, run.state.documents);
  } else {
    data::start_fresh(run);
    run.state.fingerprint = fingerprint;
    run.state.documents = data::count_documents(run);
    run.is_val = data::validation_documents(run.state.documents, options.val_fraction, options.seed);
    tokenizer = data::choose_tokenizer(run);
    data::save_state(run.state_path(), run.state);
  }
  if (tokenizer->eos_id() < 0) {
    throw DataError(run.state.tokenizer_path + ": the tokenizer has no end-of-sequence token\n"
                    "  fix: use a tokenizer with one (it separates documents in the shards)");
  }
  const auto shards = data::stream_documents(run, *tokenizer, saved.has_value());
  auto result = data::write_meta(run, *tokenizer, shards);
  result.resumed = saved.has_value();
  fs::remove(run.state_path());
  fs::remove(run.dedup_log_path());
  return result;
}

}  // namespace ffnshape
