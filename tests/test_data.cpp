// Token shards and the loader: the llm.c format byte for byte, corrupt files rejected with the file
// named, deterministic and resumable batches, disjoint ranks, sequential order, validation batches.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <unistd.h>

#include "ffnshape/train/loader.h"
#include "temp_dir.h"

using namespace ffnshape;
namespace fs = std::filesystem;

namespace {

using ffnshape::testing::TempDir;

// Shard k holds k * 10000 + i at position i: a window's first token names its shard and start.
constexpr uint32_t kStride = 10000;
std::vector<uint32_t> numbered(int64_t shard, int64_t n) {
  std::vector<uint32_t> tokens(n);
  for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<uint32_t>(shard * kStride + i);
  return tokens;
}

// Writes numbered shards of the given sizes as DIR/train_K.bin; returns the glob.
std::string numbered_shards(const TempDir& dir, const std::vector<int64_t>& sizes) {
  for (size_t k = 0; k < sizes.size(); ++k) {
    write_shard(dir.file("train_" + std::to_string(k) + ".bin"), numbered(k, sizes[k]), 50257);
  }
  return dir.file("train_*.bin");
}

std::vector<unsigned char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

uint32_t le32(const std::vector<unsigned char>& b, size_t at) {
  return b[at] | b[at + 1] << 8 | b[at + 2] << 16 | static_cast<uint32_t>(b[at + 3]) << 24;
}

void set_le32(std::vector<unsigned char>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<unsigned char>(v >> (8 * i));
}

// The DataError message that opening `path` as a shard throws ("" if none).
std::string shard_error(const std::string& path) {
  try {
    Shard shard(path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

// First token of every row of x (the window starts, for numbered shards).
std::vector<int64_t> starts_of(const torch::Tensor& x) {
  std::vector<int64_t> starts;
  for (int64_t b = 0; b < x.size(0); ++b) starts.push_back(x[b][0].item<int64_t>());
  return starts;
}

bool same_batch(const std::pair<torch::Tensor, torch::Tensor>& a, const std::pair<torch::Tensor, torch::Tensor>& b) {
  return torch::equal(a.first, b.first) && torch::equal(a.second, b.second);
}

}  // namespace

TEST(Shard, RoundTripUint16) {
  TempDir dir;
  const auto path = dir.file("s16.bin");
  const std::vector<uint32_t> tokens = {0, 1, 65535, 1234, 50256, 7};
  write_shard(path, tokens, 50257);
  const auto b = bytes_of(path);
  ASSERT_EQ(b.size(), 1024 + 2 * tokens.size());
  EXPECT_EQ(le32(b, 0), 20240520u);
  EXPECT_EQ(le32(b, 4), 1u);
  EXPECT_EQ(le32(b, 8), tokens.size());
  for (size_t at = 12; at < 1024; at += 4) EXPECT_EQ(le32(b, at), 0u);
  for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(b[1024 + 2 * i] | b[1025 + 2 * i] << 8, tokens[i]);

  Shard shard(path);
  EXPECT_EQ(shard.path(), path);
  ASSERT_EQ(shard.size(), 6);
  for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(shard.token(i), tokens[i]);
  std::vector<int64_t> out(3);
  shard.read(2, 3, out.data());
  EXPECT_EQ(out, (std::vector<int64_t>{65535, 1234, 50256}));
  EXPECT_EQ(shard.max_token(), 65535u);
  EXPECT_FALSE(fs::exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST(Shard, RoundTripUint32) {
  TempDir dir;
  const auto path = dir.file("s32.bin");
  const std::vector<uint32_t> tokens = {99999, 0, 65536, 70000, 3};
  write_shard(path, tokens, 100000);
  const auto b = bytes_of(path);
  ASSERT_EQ(b.size(), 1024 + 4 * tokens.size());
  EXPECT_EQ(le32(b, 0), 20240801u);
  EXPECT_EQ(le32(b, 4), 7u);
  EXPECT_EQ(le32(b, 8), tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(le32(b, 1024 + 4 * i), tokens[i]);

  Shard shard(path);
  ASSERT_EQ(shard.size(), 5);
  for (size_t i = 0; i < tokens.size(); ++i) EXPECT_EQ(shard.token(i), tokens[i]);
  EXPECT_EQ(shard.max_token(), 99999u);
}

TEST(Shard, WriteRejectsIdTooWideForUint16) {
  TempDir dir;
  EXPECT_THROW(write_shard(dir.file("x.bin"), {70000}, 65536), DataError);
  EXPECT_FALSE(fs::exists(dir.file("x.bin")));
}

TEST(Shard, RejectsCorruptFilesNamingThem) {
  TempDir dir;
  const auto good = dir.file("good.bin");
  write_shard(good, numbered(0, 100), 50257);
  const auto original = bytes_of(good);

  const auto missing = dir.file("missing.bin");
  auto msg = shard_error(missing);
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
  EXPECT_NE(msg.find("fix:"), std::string::npos) << msg;

  const auto short_file = dir.file("short.bin");
  put_bytes(short_file, std::vector<unsigned char>(original.begin(), original.begin() + 100));
  msg = shard_error(short_file);
  EXPECT_NE(msg.find(short_file), std::string::npos) << msg;
  EXPECT_NE(msg.find("1024"), std::string::npos) << msg;

  const auto truncated = dir.file("truncated.bin");
  put_bytes(truncated, std::vector<unsigned char>(original.begin(), original.end() - 2));
  msg = shard_error(truncated);
  EXPECT_NE(msg.find(truncated), std::string::npos) << msg;
  EXPECT_NE(msg.find("100 tokens"), std::string::npos) << msg;

  const auto longer = dir.file("longer.bin");
  auto extra = original;
  extra.push_back(0);
  put_bytes(longer, extra);
  EXPECT_NE(shard_error(longer).find(longer), std::string::npos);

  const auto bad_magic = dir.file("magic.bin");
  auto patched = original;
  set_le32(patched, 0, 12345);
  put_bytes(bad_magic, patched);
  msg = shard_error(bad_magic);
  EXPECT_NE(msg.find(bad_magic), std::string::npos) << msg;
  EXPECT_NE(msg.find("magic"), std::string::npos) << msg;

  // A uint16 magic with the uint32 version is rejected too.
  const auto bad_version = dir.file("version.bin");
  patched = original;
  set_le32(patched, 4, 7);
  put_bytes(bad_version, patched);
  msg = shard_error(bad_version);
  EXPECT_NE(msg.find(bad_version), std::string::npos) << msg;
  EXPECT_NE(msg.find("version"), std::string::npos) << msg;

  EXPECT_EQ(shard_error(good), "");
}

TEST(Shard, GlobIsSortedAndEmptyMatchIsAnError) {
  TempDir dir;
  for (const char* name : {"b.bin", "a.bin", "c.bin"}) write_shard(dir.file(name), {1, 2}, 100);
  EXPECT_EQ(expand_glob(dir.file("*.bin")),
            (std::vector<std::string>{dir.file("a.bin"), dir.file("b.bin"), dir.file("c.bin")}));
  try {
    expand_glob(dir.file("val_*.bin"));
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no files match " + dir.file("val_*.bin")), std::string::npos) << msg;
    EXPECT_NE(msg.find("fix:"), std::string::npos) << msg;
  }
}

TEST(Loader, RejectsTokenIdsOutsideVocabulary) {
  TempDir dir;
  write_shard(dir.file("a.bin"), numbered(0, 100), 50257);
  auto tokens = numbered(0, 100);
  tokens[57] = 500;
  write_shard(dir.file("b.bin"), tokens, 50257);
  LoaderOptions o;
  o.pattern = dir.file("*.bin");
  o.seq_len = 8;
  o.vocab_size = 500;
  try {
    TokenLoader loader(o);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(dir.file("b.bin")), std::string::npos) << msg;
    EXPECT_NE(msg.find("500"), std::string::npos) << msg;
  }
  EXPECT_THROW(validation_batches(o.pattern, 8, 2, 1, 500), DataError);
  o.vocab_size = 501;
  EXPECT_NO_THROW(TokenLoader loader(o));
}

TEST(Loader, SkipsShortShardsAndNeedsOneWindow) {
  TempDir dir;
  const auto pattern = numbered_shards(dir, {5, 40});
  LoaderOptions o;
  o.pattern = pattern;
  o.seq_len = 9;
  TokenLoader loader(o);
  EXPECT_EQ(loader.total_tokens(), 40);
  for (int i = 0; i < 20; ++i) {
    for (auto s : starts_of(loader.next().first)) EXPECT_EQ(s / kStride, 1);  // never the 5-token shard
  }
  o.seq_len = 40;  // a window needs 41 tokens
  EXPECT_THROW(TokenLoader{o}, DataError);
  EXPECT_THROW(validation_batches(pattern, 40, 1, 1), DataError);
}

TEST(Loader, YIsXShiftedByOne) {
  TempDir dir;
  LoaderOptions o;
  o.pattern = numbered_shards(dir, {300, 200});
  o.seq_len = 16;
  o.batch = 4;
  TokenLoader loader(o);
  for (int i = 0; i < 10; ++i) {
    const auto [x, y] = loader.next();
    ASSERT_EQ(x.sizes(), (std::vector<int64_t>{4, 16}));
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{4, 16}));
    EXPECT_EQ(x.dtype(), torch::kInt64);
    EXPECT_TRUE(x.device().is_cpu());
    // Contiguous tokens of one shard: x = start + t, y = start + t + 1.
    const auto t = torch::arange(16, torch::kInt64);
    for (int64_t b = 0; b < 4; ++b) {
      EXPECT_TRUE(torch::equal(x[b], x[b][0] + t));
      EXPECT_TRUE(torch::equal(y[b], x[b][0] + t + 1));
    }
  }
}

TEST(Loader, SameSeedSameBatchesOtherSeedDiffers) {
  TempDir dir;
  LoaderOptions o;
  o.pattern = numbered_shards(dir, {3000, 2000});
  o.seq_len = 16;
  o.batch = 4;
  o.seed = 42;
  TokenLoader a(o), b(o);
  o.seed = 43;
  TokenLoader c(o);
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    const auto batch_a = a.next();
    EXPECT_TRUE(same_batch(batch_a, b.next()));
    differs |= !same_batch(batch_a, c.next());
  }
  EXPECT_TRUE(differs);
}

TEST(Loader, ResumesExactlyFromState) {
  TempDir dir;
  for (bool sequential : {false, true}) {
    LoaderOptions o;
    o.pattern = numbered_shards(dir, {3000, 2000});
    o.seq_len = 16;
    o.batch = 4;
    o.seed = 7;
    o.sequential = sequential;
    TokenLoader original(o);
    for (int i = 0; i < 5; ++i) original.next();
    const auto saved = original.state();
    EXPECT_EQ(saved.batches_drawn, 5u);
    std::vector<std::pair<torch::Tensor, torch::Tensor>> expected;
    for (int i = 0; i < 3; ++i) expected.push_back(original.next());

    TokenLoader resumed(o);
    resumed.set_state(saved);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(same_batch(resumed.next(), expected[i])) << "batch " << i;
    EXPECT_EQ(resumed.state().batches_drawn, 8u);
  }
}

// R ranks of batch b read, row for row, the global batch one loader of batch R * b reads.
TEST(Loader, RanksSplitTheGlobalBatch) {
  TempDir dir;
  const std::vector<int64_t> sizes = {3000, 2500, 4000};
  for (bool sequential : {false, true}) {
    LoaderOptions o;
    o.pattern = numbered_shards(dir, sizes);
    o.seq_len = 16;
    o.seed = 1;
    o.sequential = sequential;
    o.batch = 6;
    TokenLoader whole(o);
    o.batch = 2;
    o.world = 3;
    std::vector<std::unique_ptr<TokenLoader>> ranks;
    for (int64_t rank = 0; rank < 3; ++rank) {
      o.rank = rank;
      ranks.push_back(std::make_unique<TokenLoader>(o));
    }
    std::set<int64_t> seen;
    for (int i = 0; i < 40; ++i) {
      const auto expected = whole.next_windows();
      for (int64_t rank = 0; rank < 3; ++rank) {
        const auto got = ranks[rank]->next_windows();
        EXPECT_TRUE(torch::equal(got, expected.narrow(0, 2 * rank, 2))) << "batch " << i << ", rank " << rank;
      }
      for (auto s : starts_of(expected.narrow(1, 0, 16))) {
        EXPECT_LE(s % kStride + 17, sizes[s / kStride]);  // a whole window inside the shard
        seen.insert(s);
      }
    }
    if (!sequential) {
      // Random starts are not tied to window boundaries.
      int64_t unaligned = 0;
      for (auto s : seen) unaligned += (s % kStride) % 17 != 0;
      EXPECT_GT(unaligned, 0);
    }
  }
}

TEST(Loader, SequentialWalksWindowsInOrderAndWraps) {
  TempDir dir;
  LoaderOptions o;
  o.pattern = numbered_shards(dir, {50, 35});  // windows of 10: starts 0..40 in shard 0, 0..20 in shard 1
  o.seq_len = 9;
  o.batch = 3;
  o.sequential = true;
  const std::vector<int64_t> windows = {0, 10, 20, 30, 40, kStride, kStride + 10, kStride + 20};
  TokenLoader loader(o);
  std::vector<int64_t> seen;
  for (int i = 0; i < 4; ++i) {
    for (auto s : starts_of(loader.next().first)) seen.push_back(s);
  }
  for (size_t q = 0; q < seen.size(); ++q) EXPECT_EQ(seen[q], windows[q % windows.size()]) << "sequence " << q;
}

TEST(Loader, SequentialRanksTakeConsecutiveRows) {
  TempDir dir;
  LoaderOptions o;
  o.pattern = numbered_shards(dir, {50, 35});
  o.seq_len = 9;
  o.batch = 2;
  o.sequential = true;
  o.world = 2;
  const std::vector<int64_t> windows = {0, 10, 20, 30, 40, kStride, kStride + 10, kStride + 20};
  for (int64_t rank = 0; rank < 2; ++rank) {
    o.rank = rank;
    TokenLoader loader(o);
    std::vector<int64_t> seen;
    for (int i = 0; i < 3; ++i) {
      for (auto s : starts_of(loader.next().first)) seen.push_back(s);
    }
    // Global batch i holds windows 4i .. 4i + 3 (mod 8); rank r reads the two from 4i + 2r.
    for (size_t q = 0; q < seen.size(); ++q) {
      EXPECT_EQ(seen[q], windows[(4 * (q / 2) + 2 * rank + q % 2) % 8]) << "rank " << rank << ", row " << q;
    }
  }
  o.world = 9;  // more rows than windows: the walk wraps instead of starving a rank
  o.rank = 8;
  EXPECT_EQ(starts_of(TokenLoader(o).next().first).front(), windows[16 % 8]);
}

TEST(Validation, DeterministicEvenlySpacedWindows) {
  TempDir dir;
  const auto pattern = numbered_shards(dir, {1000, 700});  // 58 + 41 = 99 windows of 17
  const auto a = validation_batches(pattern, 16, 4, 5);
  const auto b = validation_batches(pattern, 16, 4, 5);
  ASSERT_EQ(a.size(), 5u);
  std::set<int64_t> starts;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(same_batch(a[k], b[k]));
    ASSERT_EQ(a[k].first.sizes(), (std::vector<int64_t>{4, 16}));
    EXPECT_TRUE(torch::equal(a[k].second, a[k].first + 1));
    for (auto s : starts_of(a[k].first)) {
      EXPECT_EQ((s % kStride) % 17, 0) << s;  // aligned, so non-overlapping
      starts.insert(s);
    }
  }
  EXPECT_EQ(starts.size(), 20u);
  EXPECT_EQ(starts.count(0), 1u);
  EXPECT_GT(*starts.rbegin(), static_cast<int64_t>(kStride));  // spread into the second shard
}

TEST(Validation, ReusesWindowsWhenShortAndNeedsOne) {
  TempDir dir;
  const auto pattern = numbered_shards(dir, {35});  // 3 windows of 10
  const auto batches = validation_batches(pattern, 9, 2, 3);
  std::vector<int64_t> seen;
  for (const auto& batch : batches) {
    for (auto s : starts_of(batch.first)) seen.push_back(s);
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 10, 20, 0, 10, 20}));
  EXPECT_THROW(validation_batches(pattern, 35, 2, 3), DataError);
  EXPECT_THROW(validation_batches(dir.file("none_*.bin"), 9, 2, 3), DataError);
}
