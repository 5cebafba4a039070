#include "ffnshape/train/loader.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace ffnshape {
namespace {

constexpr int64_t kHeaderInts = 256;
constexpr int64_t kHeaderBytes = kHeaderInts * 4;
constexpr int32_t kMagic16 = 20240520, kVersion16 = 1;
constexpr int32_t kMagic32 = 20240801, kVersion32 = 7;
const char* kShardHint = "regenerate the shard (llm.c format: 1024-byte header, then uint16 or uint32 tokens)";

// Same layout as ConfigError's messages: "PATH: problem\n  fix: hint".
DataError data_error(const std::string& path, const std::string& problem, const std::string& hint) {
  std::string text = path.empty() ? problem : path + ": " + problem;
  if (!hint.empty()) text += "\n  fix: " + hint;
  return DataError(text);
}

// Explicit little-endian byte order, so shards are portable whatever the host order.
void put_le(std::vector<unsigned char>& out, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<unsigned char>(value >> (8 * i)));
}

uint32_t get_le(const unsigned char* p, int bytes) {
  uint32_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint32_t>(p[i]) << (8 * i);
  return value;
}

// splitmix64: a tiny, fully specified generator, so a (seed, batch) gives the same windows
// on every platform (std::uniform_int_distribution is implementation-defined).
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t next() { return mix64(state_++ * 0x9e3779b97f4a7c15ULL); }
  // Uniform in [0, bound) by rejection: no modulo bias.
  uint64_t below(uint64_t bound) {
    const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % bound;
    uint64_t r;
    do r = next(); while (r >= limit);
    return r % bound;
  }

 private:
  uint64_t state_;
};

uint64_t batch_seed(uint64_t seed, uint64_t batch) { return mix64(mix64(mix64(seed)) ^ batch); }

// The shards a loader reads: every match of the pattern, ids checked against the vocabulary, and
// those too short for one window of `window` tokens left out.
std::vector<std::unique_ptr<Shard>> open_shards(const std::string& pattern, int64_t window, int64_t vocab_size) {
  std::vector<std::unique_ptr<Shard>> shards;
  for (const auto& path : expand_glob(pattern)) {
    auto shard = std::make_unique<Shard>(path);
    if (vocab_size > 0 && shard->size() > 0 && shard->max_token() >= vocab_size) {
      throw data_error(path, "holds token id " + std::to_string(shard->max_token()) + " >= vocab_size " +
                                 std::to_string(vocab_size),
                       "tokenize with the model's tokenizer, or raise model.vocab_size");
    }
    if (shard->size() >= window) shards.push_back(std::move(shard));
  }
  if (shards.empty()) {
    throw data_error(pattern, "no shard holds a full window of " + std::to_string(window) + " tokens (seq_len + 1)",
                     "add data or lower seq_len");
  }
  return shards;
}

}  // namespace

// --- write_shard ---------------------------------------------------------------------------------

bool shard_uses_uint16(int64_t vocab_size) { return vocab_size <= 65536; }

std::vector<unsigned char> shard_header(int64_t token_count, bool uint16_tokens) {
  std::vector<unsigned char> header;
  header.reserve(kHeaderBytes);
  int32_t fields[kHeaderInts] = {};
  fields[0] = uint16_tokens ? kMagic16 : kMagic32;
  fields[1] = uint16_tokens ? kVersion16 : kVersion32;
  fields[2] = static_cast<int32_t>(token_count);
  for (auto value : fields) put_le(header, static_cast<uint32_t>(value), 4);
  return header;
}

void write_shard(const std::string& path, const std::vector<uint32_t>& tokens, int64_t vocab_size) {
  const bool narrow = shard_uses_uint16(vocab_size);
  const int bytes = narrow ? 2 : 4;
  if (tokens.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw data_error(path, "too many tokens for one shard (" + std::to_string(tokens.size()) + ")",
                     "split the tokens over several shards");
  }
  auto data = shard_header(static_cast<int64_t>(tokens.size()), narrow);
  data.reserve(kHeaderBytes + tokens.size() * bytes);
  for (auto token : tokens) {
    if (narrow && token > 0xffff) {
      throw data_error(path, "token id " + std::to_string(token) + " does not fit uint16 (vocab_size " +
                                 std::to_string(vocab_size) + ")",
                       "pass the real vocab_size (> 65536 writes uint32 tokens)");
    }
    put_le(data, token, bytes);
  }
  // Write next to the target and rename: a reader never sees a half-written shard.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw data_error(tmp, "cannot write the shard", "check that the directory exists and has free space");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    throw data_error(path, "cannot move the finished shard into place (" + reason + ")",
                     "check the directory's permissions");
  }
}

// --- Shard ---------------------------------------------------------------------------------------

Shard::Shard(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    const int err = errno;
    throw data_error(path, err == ENOENT ? "no such file" : std::string("cannot open: ") + std::strerror(err),
                     "check the data path (make shards with the tokenizer tool or llm.c's scripts)");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw data_error(path, std::string("cannot stat: ") + std::strerror(errno), "check the file");
  }
  const int64_t file_size = st.st_size;
  unsigned char header[kHeaderBytes];
  if (file_size < kHeaderBytes || ::pread(fd, header, kHeaderBytes, 0) != kHeaderBytes) {
    ::close(fd);
    throw data_error(path, "is " + std::to_string(file_size) + " bytes, shorter than the 1024-byte shard header",
                     std::string("the file is truncated or not a token shard; ") + kShardHint);
  }
  const auto magic = static_cast<int32_t>(get_le(header, 4));
  const auto version = static_cast<int32_t>(get_le(header + 4, 4));
  count_ = static_cast<int32_t>(get_le(header + 8, 4));
  auto reject = [&](const std::string& problem, const std::string& hint) {
    ::close(fd);
    throw data_error(path, problem, hint);
  };
  if (magic != kMagic16 && magic != kMagic32) {
    reject("bad magic " + std::to_string(magic) + " (expected 20240520 for uint16 or 20240801 for uint32 tokens)",
           std::string("this is not an llm.c token shard; ") + kShardHint);
  }
  const int32_t expected_version = magic == kMagic16 ? kVersion16 : kVersion32;
  if (version != expected_version) {
    reject("magic " + std::to_string(magic) + " with version " + std::to_string(version) + " (expected " +
               std::to_string(expected_version) + ")",
           kShardHint);
  }
  bytes_per_token_ = magic == kMagic16 ? 2 : 4;
  if (count_ < 0) reject("negative token count " + std::to_string(count_) + " in the header", kShardHint);
  const int64_t expected_size = kHeaderBytes + count_ * bytes_per_token_;
  if (file_size != expected_size) {
    reject("header says " + std::to_string(count_) + " tokens (" + std::to_string(expected_size) +
               " bytes) but the file is " + std::to_string(file_size) + " bytes",
           std::string("the file is truncated or was written incompletely; ") + kShardHint);
  }
  map_size_ = static_cast<size_t>(file_size);
  map_ = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw data_error(path, std::string("cannot mmap: ") + std::strerror(err), "check memory limits (ulimit -v)");
  }
}

Shard::~Shard() {
  if (map_) ::munmap(map_, map_size_);
}

uint32_t Shard::token(int64_t i) const {
  if (i < 0 || i >= count_) throw std::out_of_range(path_ + ": token " + std::to_string(i) + " out of range");
  const auto* base = static_cast<const unsigned char*>(map_) + kHeaderBytes;
  return get_le(base + i * bytes_per_token_, bytes_per_token_);
}

void Shard::read(int64_t start, int64_t n, int64_t* out) const {
  if (start < 0 || n < 0 || start + n > count_) {
    throw std::out_of_range(path_ + ": tokens [" + std::to_string(start) + ", " + std::to_string(start + n) +
                            ") out of range");
  }
  const auto* p = static_cast<const unsigned char*>(map_) + kHeaderBytes + start * bytes_per_token_;
  for (int64_t i = 0; i < n; ++i, p += bytes_per_token_) out[i] = get_le(p, bytes_per_token_);
}

uint32_t Shard::max_token() const {
  if (max_token_ < 0) {
    uint32_t best = 0;
    const auto* p = static_cast<const unsigned char*>(map_) + kHeaderBytes;
    for (int64_t i = 0; i < count_; ++i, p += bytes_per_token_) best = std::max(best, get_le(p, bytes_per_token_));
    max_token_ = best;
  }
  return static_cast<uint32_t>(max_token_);
}

// --- expand_glob ---------------------------------------------------------------------------------

std::vector<std::string> expand_glob(const std::string& pattern) {
  glob_t found{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &found);
  std::vector<std::string> paths;
  if (rc == 0) paths.assign(found.gl_pathv, found.gl_pathv + found.gl_pathc);
  ::globfree(&found);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    throw data_error(pattern, "cannot expand the pattern (read error)", "check the directory's permissions");
  }
  if (paths.empty()) {
    throw data_error("", "no files match " + pattern,
                     "check the data path in the config (data.train / data.val) and that the shards exist");
  }
  // Byte order, not the locale's collation: every rank and machine sees the same shard order.
  std::sort(paths.begin(), paths.end());
  return paths;
}

// --- TokenLoader ---------------------------------------------------------------------------------
//
// Global batches: every draw is one global batch of world * batch windows, fixed by (seed, batch
// number) alone; rank r reads rows [r * batch, (r + 1) * batch) of it. So R ranks of micro-batch b
// see exactly the windows one process of micro-batch R * b sees, ranks never read the same row, and
// a loader position means the same data at every world size.
//  - Random mode draws each row's start uniformly among all valid starts (s + window <= shard size)
//    of all shards, with replacement, as a single process would.
//  - Sequential mode walks the non-overlapping windows (slots of window = seq_len + 1 tokens, shards
//    in order), row q of global batch n taking slot (n * world * batch + q) mod slots.

struct TokenLoader::Impl {
  std::vector<std::unique_ptr<Shard>> shards;
  std::vector<int64_t> starts_end;  // cumulative count of valid window starts, shards in order
  std::vector<int64_t> slots_end;   // cumulative count of non-overlapping windows
  int64_t total_tokens = 0;
  uint64_t batches_drawn = 0;

  // The shard holding the u-th element of a cumulative count, and u's index inside it.
  std::pair<size_t, int64_t> locate(const std::vector<int64_t>& ends, int64_t u) const {
    const size_t i = std::upper_bound(ends.begin(), ends.end(), u) - ends.begin();
    return {i, u - (i == 0 ? 0 : ends[i - 1])};
  }
};

TokenLoader::TokenLoader(LoaderOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  const auto& o = options_;
  if (o.seq_len < 1 || o.batch < 1 || o.world < 1 || o.rank < 0 || o.rank >= o.world) {
    throw std::invalid_argument("TokenLoader: need seq_len >= 1, batch >= 1, 0 <= rank < world");
  }
  const int64_t window = o.seq_len + 1;
  impl_->shards = open_shards(o.pattern, window, o.vocab_size);
  int64_t starts = 0, slots = 0;
  for (const auto& shard : impl_->shards) {
    impl_->starts_end.push_back(starts += shard->size() - window + 1);
    impl_->slots_end.push_back(slots += shard->size() / window);
    impl_->total_tokens += shard->size();
  }
}

TokenLoader::~TokenLoader() = default;

std::pair<torch::Tensor, torch::Tensor> TokenLoader::next() {
  auto windows = next_windows();
  return {windows.narrow(1, 0, options_.seq_len).contiguous(), windows.narrow(1, 1, options_.seq_len).contiguous()};
}

torch::Tensor TokenLoader::next_windows() {
  const auto& o = options_;
  const int64_t window = o.seq_len + 1;
  auto buffer = torch::empty({o.batch, window}, torch::TensorOptions(torch::kInt64).pinned_memory(o.pin_memory));
  int64_t* out = buffer.data_ptr<int64_t>();
  const uint64_t n = impl_->batches_drawn++;
  const int64_t first_row = o.rank * o.batch;
  if (o.sequential) {
    const auto slots = static_cast<uint64_t>(impl_->slots_end.back());
    for (int64_t b = 0; b < o.batch; ++b, out += window) {
      const uint64_t q = n * static_cast<uint64_t>(o.world * o.batch) + static_cast<uint64_t>(first_row + b);
      const auto [i, slot] = impl_->locate(impl_->slots_end, static_cast<int64_t>(q % slots));
      impl_->shards[i]->read(slot * window, window, out);
    }
    return buffer;
  }
  // The rows of earlier ranks are drawn and dropped, so every rank's rows come from one sequence.
  SplitMix rng(batch_seed(o.seed, n));
  const auto starts = static_cast<uint64_t>(impl_->starts_end.back());
  for (int64_t row = 0; row < first_row + o.batch; ++row) {
    const auto u = static_cast<int64_t>(rng.below(starts));
    if (row < first_row) continue;
    const auto [i, start] = impl_->locate(impl_->starts_end, u);
    impl_->shards[i]->read(start, window, out);
    out += window;
  }
  return buffer;
}

LoaderState TokenLoader::state() const { return LoaderState{impl_->batches_drawn}; }

void TokenLoader::set_state(const LoaderState& state) { impl_->batches_drawn = state.batches_drawn; }

int64_t TokenLoader::total_tokens() const { return impl_->total_tokens; }

// --- validation_batches --------------------------------------------------------------------------

std::vector<std::pair<torch::Tensor, torch::Tensor>> validation_batches(const std::string& pattern, int64_t seq_len,
                                                                        int64_t batch, int64_t batches,
                                                                        int64_t vocab_size) {
  if (seq_len < 1 || batch < 1 || batches < 0) {
    throw std::invalid_argument("validation_batches: need seq_len >= 1, batch >= 1, batches >= 0");
  }
  const int64_t window = seq_len + 1;
  const auto shards = open_shards(pattern, window, vocab_size);
  std::vector<int64_t> slots_end;
  int64_t total = 0;
  for (const auto& shard : shards) slots_end.push_back(total += shard->size() / window);
  // Evenly spaced slots when there are enough; otherwise every slot in order, reused from the start.
  const int64_t need = batch * batches;
  auto slot_of = [&](int64_t q) {
    if (total < need) return q % total;
    return static_cast<int64_t>(static_cast<__int128>(q) * total / need);
  };
  std::vector<std::pair<torch::Tensor, torch::Tensor>> out;
  for (int64_t k = 0; k < batches; ++k) {
    auto buffer = torch::empty({batch, window}, torch::kInt64);
    int64_t* row = buffer.data_ptr<int64_t>();
    for (int64_t b = 0; b < batch; ++b, row += window) {
      const int64_t g = slot_of(k * batch + b);
      const size_t i = std::upper_bound(slots_end.begin(), slots_end.end(), g) - slots_end.begin();
      const int64_t local = g - (i == 0 ? 0 : slots_end[i - 1]);
      shards[i]->read(local * window, window, row);
    }
    out.emplace_back(buffer.narrow(1, 0, seq_len).contiguous(), buffer.narrow(1, 1, seq_len).contiguous());
  }
  return out;
}

}  // namespace ffnshape
