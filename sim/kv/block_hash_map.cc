// Flat open-addressing block-hash map (see block_hash_map.h).
#include "sim/kv/block_hash_map.h"

#include <cstdio>
#include <cstdlib>

namespace servesim {

BlockHashMap::BlockHashMap(size_t max_entries) {
  size_t cap = 16;
  int bits = 4;
  while (cap < 2 * max_entries + 2) cap <<= 1, ++bits;
  slots_.assign(cap, SlotEntry{});
  mask_ = cap - 1;
  shift_ = 64 - bits;
}

bool BlockHashMap::Insert(uint64_t key, int32_t block) {
  size_t i = Slot(key);
  for (; slots_[i].key != 0; i = (i + 1) & mask_) {
    if (slots_[i].key == key) return false;
  }
  if (2 * (size_ + 1) > slots_.size()) {
    std::fprintf(stderr, "servesim: BlockHashMap over capacity\n");
    std::abort();
  }
  slots_[i].key = key;
  slots_[i].value = block;
  ++size_;
  return true;
}

void BlockHashMap::Assign(uint64_t key, int32_t block) {
  for (size_t i = Slot(key);; i = (i + 1) & mask_) {
    if (slots_[i].key == key) {
      slots_[i].value = block;
      return;
    }
    if (slots_[i].key == 0) {
      std::fprintf(stderr, "servesim: BlockHashMap::Assign of an absent key\n");
      std::abort();
    }
  }
}

void BlockHashMap::Erase(uint64_t key) {
  size_t i = Slot(key);
  while (slots_[i].key != key) {
    if (slots_[i].key == 0) return;
    i = (i + 1) & mask_;
  }
  // Backward-shift: move later entries of the run into the hole when their
  // home slot does not lie cyclically in (hole, their position].
  for (size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
    const size_t home = Slot(slots_[j].key);
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    slots_[i].key = slots_[j].key;
    slots_[i].value = slots_[j].value;
    i = j;
  }
  slots_[i].key = 0;
  slots_[i].value = -1;
  --size_;
}

}  // namespace servesim
