// A per-thread cache of encoded words: open addressing over an arena of keys and ids, emptied
// wholesale when half full, so a lookup or an insert never allocates per word.
#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {
constexpr size_t kSlots = size_t{1} << 17;  // 131072 words; big.txt has about 40,000 distinct ones
}

void WordCache::reset(uint64_t owner) {
  owner_ = owner;
  slots_.assign(slots_.empty() ? 0 : kSlots, Slot{});
  keys_.clear();
  ids_.clear();
  used_ = 0;
}

bool WordCache::find(std::string_view word, uint64_t hash, const uint32_t** ids, size_t* count) const {
  if (slots_.empty()) return false;
  for (size_t slot = hash & (kSlots - 1);; slot = (slot + 1) & (kSlots - 1)) {
    const Slot& s = slots_[slot];
    if (!s.used) return false;
    if (s.hash == hash && s.key_length == word.size() &&
        std::string_view(keys_.data() + s.key_offset, s.key_length) == word) {
      *ids = ids_.data() + s.ids_offset;
      *count = s.ids_count;
      return true;
    }
  }
}

void WordCache::insert(std::string_view word, uint64_t hash, const uint32_t* ids, size_t count) {
  if (slots_.empty()) {
    slots_.assign(kSlots, Slot{});
    keys_.reserve(1 << 20);
    ids_.reserve(1 << 18);
  }
  if (used_ >= kSlots / 2) reset(owner_);
  size_t slot = hash & (kSlots - 1);
  while (slots_[slot].used) slot = (slot + 1) & (kSlots - 1);
  slots_[slot] = {hash, static_cast<uint32_t>(keys_.size()), static_cast<uint32_t>(word.size()),
                  static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(count), true};
  keys_.append(word);
  ids_.insert(ids_.end(), ids, ids + count);
  ++used_;
}

}  // namespace ffnshape::hf
