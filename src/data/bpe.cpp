// The BPE model of tokenizer.json on byte-level words: each byte starts as the id of its character
// (bytes_to_unicode), then the pair of lowest merge rank, leftmost first, merges until none is left;
// the order in which tokenizers' Word::merge_all applies merges, so the ids are the same.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {

constexpr uint32_t kNoMerge = std::numeric_limits<uint32_t>::max();
constexpr size_t kLongWord = 48;       // above this many symbols the merge loop uses a heap
constexpr size_t kCacheableBytes = 96;  // longer words are rare and skip the cache

uint64_t pair_key(uint32_t left, uint32_t right) { return (static_cast<uint64_t>(left) << 32) | right; }
uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

}  // namespace

uint64_t hash_bytes(std::string_view bytes) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t chunk;
    std::memcpy(&chunk, bytes.data() + i, 8);
    h = (h ^ chunk) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  return mix(h ^ tail);
}

BpeModel::BpeModel(const std::vector<std::pair<std::string, uint32_t>>& vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, Options options,
                   const std::string& where)
    : options_(options) {
  std::unordered_map<std::string_view, uint32_t> id_of;
  id_of.reserve(vocab.size());
  std::string bytes;
  for (const auto& [token, id] : vocab) {
    id_of[token] = id;
    if (byte_chars_to_bytes(token, bytes)) word_ids_[bytes] = id;
  }
  for (int b = 0; b < 256; ++b) {
    const auto found = id_of.find(byte_char(static_cast<uint8_t>(b)));
    if (found != id_of.end()) {
      byte_ids_[b] = {found->second};
    } else if (options_.byte_fallback) {  // the <0xNN> pieces of the character's UTF-8, all or none
      std::vector<uint32_t> pieces;
      for (char c : byte_char(static_cast<uint8_t>(b))) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned>(static_cast<uint8_t>(c)));
        const auto piece = id_of.find(name);
        if (piece == id_of.end()) break;
        pieces.push_back(piece->second);
      }
      if (pieces.size() == byte_char(static_cast<uint8_t>(b)).size()) byte_ids_[b] = pieces, byte_is_fallback_[b] = true;
    }
  }
  size_t capacity = 16;
  while (capacity < 2 * merges.size() + 2) capacity *= 2;
  merge_table_.assign(capacity, MergeSlot{});
  merge_mask_ = capacity - 1;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto l = id_of.find(left), r = id_of.find(right), m = id_of.find(left + right);
    const char* missing = l == id_of.end() ? "its first part" : r == id_of.end() ? "its second part"
                          : m == id_of.end() ? "the merged token" : nullptr;
    if (missing) {
      throw DataError(where + ".merges[" + std::to_string(rank) + "] = \"" + left + " " + right + "\": " + missing +
                      " is not in model.vocab\n  fix: the vocabulary and merges must come from the same tokenizer");
    }
    const uint64_t key = pair_key(l->second, r->second);
    uint64_t slot = mix(key) & merge_mask_;
    while (merge_table_[slot].key != ~uint64_t{0} && merge_table_[slot].key != key) slot = (slot + 1) & merge_mask_;
    merge_table_[slot] = {key, {static_cast<uint32_t>(rank), m->second}};  // a repeated pair: the last rank wins
  }
}

bool BpeModel::find_merge(uint32_t left, uint32_t right, Merge* merge) const {
  const uint64_t key = pair_key(left, right);
  for (uint64_t slot = mix(key) & merge_mask_;; slot = (slot + 1) & merge_mask_) {
    const MergeSlot& s = merge_table_[slot];
    if (s.key == key) {
      *merge = s.merge;
      return true;
    }
    if (s.key == ~uint64_t{0}) return false;
  }
}

// Bytes without a piece become unk (fused when fuse_unk) or vanish when the model has no unk,
// exactly as BPE::merge_word treats characters missing from the vocabulary.
void BpeModel::initial_symbols(std::string_view word, std::vector<uint32_t>& symbols) const {
  symbols.clear();
  bool pending_unk = false;
  for (char c : word) {
    const auto b = static_cast<uint8_t>(c);
    if (!byte_ids_[b].empty() && !byte_is_fallback_[b]) {
      if (pending_unk) symbols.push_back(static_cast<uint32_t>(options_.unk_id)), pending_unk = false;
      symbols.push_back(byte_ids_[b][0]);
    } else if (!byte_ids_[b].empty()) {
      symbols.insert(symbols.end(), byte_ids_[b].begin(), byte_ids_[b].end());
    } else if (options_.unk_id >= 0) {
      if (pending_unk && !options_.fuse_unk) symbols.push_back(static_cast<uint32_t>(options_.unk_id));
      pending_unk = true;
    }
  }
  if (pending_unk) symbols.push_back(static_cast<uint32_t>(options_.unk_id));
}

// Short words: a scan for the lowest (rank, position) pair beats a heap.
void BpeModel::merge_symbols(std::vector<uint32_t>& symbols) const {
  if (symbols.size() > kLongWord) return merge_with_heap(symbols);
  uint32_t ranks[kLongWord], merged[kLongWord];
  Merge m;
  const auto look_up = [&](size_t k) {
    const bool found = find_merge(symbols[k], symbols[k + 1], &m);
    ranks[k] = found ? m.rank : kNoMerge;
    merged[k] = found ? m.new_id : 0;
  };
  size_t count = symbols.size();
  for (size_t k = 0; k + 1 < count; ++k) look_up(k);
  while (count > 1) {
    size_t best = 0;
    for (size_t k = 1; k + 1 < count; ++k) best = ranks[k] < ranks[best] ? k : best;
    if (ranks[best] == kNoMerge) break;
    // symbols[best + 1] and the pair that started there go; the rest shift left by one.
    const size_t symbols_after = count - best - 2, pairs_after = symbols_after > 0 ? symbols_after - 1 : 0;
    symbols[best] = merged[best];
    std::memmove(&symbols[best + 1], &symbols[best + 2], symbols_after * sizeof(uint32_t));
    std::memmove(&ranks[best + 1], &ranks[best + 2], pairs_after * sizeof(uint32_t));
    std::memmove(&merged[best + 1], &merged[best + 2], pairs_after * sizeof(uint32_t));
    --count;
    if (best + 1 < count) look_up(best);
    if (best > 0) look_up(best - 1);
  }
  symbols.resize(count);
}

// Long words (runs of spaces or digits): tokenizers' own algorithm, a heap of candidate merges
// whose stale entries are skipped when popped. A candidate is (rank << 32 | position), so the heap
// holds plain integers; a rank names one merge, so an entry is current when the pair now at its
// position has its rank.
void BpeModel::merge_with_heap(std::vector<uint32_t>& symbols) const {
  struct Link {
    int32_t prev, next;
  };
  const size_t n = symbols.size();
  std::vector<Link> links(n);
  std::vector<uint64_t> heap;
  heap.reserve(n);
  Merge m;
  for (size_t i = 0; i < n; ++i) {
    links[i] = {static_cast<int32_t>(i) - 1, i + 1 < n ? static_cast<int32_t>(i + 1) : -1};
    if (i + 1 < n && find_merge(symbols[i], symbols[i + 1], &m)) heap.push_back((uint64_t{m.rank} << 32) | i);
  }
  constexpr uint32_t kGone = std::numeric_limits<uint32_t>::max();  // a merged-away symbol
  const auto later = std::greater<uint64_t>();
  std::make_heap(heap.begin(), heap.end(), later);
  const auto push = [&](int32_t left) {
    if (left >= 0 && links[left].next >= 0 && find_merge(symbols[left], symbols[links[left].next], &m)) {
      heap.push_back((uint64_t{m.rank} << 32) | static_cast<uint32_t>(left));
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const uint64_t top = heap.back();
    heap.pop_back();
    const auto left = static_cast<int32_t>(top & 0xFFFFFFFFu);
    const int32_t right = links[left].next;
    if (symbols[left] == kGone || right < 0) continue;
    if (!find_merge(symbols[left], symbols[right], &m) || m.rank != (top >> 32)) continue;  // stale
    symbols[left] = m.new_id;
    symbols[right] = kGone;
    links[left].next = links[right].next;
    if (links[right].next >= 0) links[links[right].next].prev = left;
    push(links[left].prev);
    push(left);
  }
  symbols.erase(std::remove(symbols.begin(), symbols.end(), kGone), symbols.end());
}

void BpeModel::encode_word(std::string_view word, std::vector<uint32_t>& out, WordCache& cache) const {
  const bool cacheable = word.size() <= kCacheableBytes;
  const uint64_t hash = cacheable ? hash_bytes(word) : 0;
  const uint32_t* cached = nullptr;
  size_t count = 0;
  if (cacheable && cache.find(word, hash, &cached, &count)) {
    out.insert(out.end(), cached, cached + count);
    return;
  }
  thread_local std::vector<uint32_t> symbols;
  const auto whole = options_.ignore_merges ? word_ids_.find(std::string(word)) : word_ids_.end();
  if (whole != word_ids_.end()) {
    symbols.assign(1, whole->second);
  } else {
    initial_symbols(word, symbols);
    merge_symbols(symbols);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
  if (cacheable) cache.insert(word, hash, symbols.data(), symbols.size());
}

}  // namespace ffnshape::hf
