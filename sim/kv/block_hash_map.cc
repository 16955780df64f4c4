// Flat open-addressing block-hash map (see block_hash_map.h).
#include "sim/kv/block_hash_map.h"

#include <cstdio>
#include <cstdlib>

namespace servesim {

BlockHashMap::BlockHashMap(size_t max_entries) {
  size_t cap = 16;
  int bits = 4;
  while (cap < 2 * max_entries + 2) cap <<= 1, ++bits;
  keys_.assign(cap, 0);
  values_.assign(cap, -1);
  mask_ = cap - 1;
  shift_ = 64 - bits;
}

int32_t BlockHashMap::Find(uint64_t key) const {
  for (size_t i = Slot(key);; i = (i + 1) & mask_) {
    if (keys_[i] == key) return values_[i];
    if (keys_[i] == 0) return -1;
  }
}

bool BlockHashMap::Insert(uint64_t key, int32_t block) {
  size_t i = Slot(key);
  for (; keys_[i] != 0; i = (i + 1) & mask_) {
    if (keys_[i] == key) return false;
  }
  if (2 * (size_ + 1) > keys_.size()) {
    std::fprintf(stderr, "servesim: BlockHashMap over capacity\n");
    std::abort();
  }
  keys_[i] = key;
  values_[i] = block;
  ++size_;
  return true;
}

void BlockHashMap::Assign(uint64_t key, int32_t block) {
  for (size_t i = Slot(key);; i = (i + 1) & mask_) {
    if (keys_[i] == key) {
      values_[i] = block;
      return;
    }
    if (keys_[i] == 0) {
      std::fprintf(stderr, "servesim: BlockHashMap::Assign of an absent key\n");
      std::abort();
    }
  }
}

void BlockHashMap::Erase(uint64_t key) {
  size_t i = Slot(key);
  while (keys_[i] != key) {
    if (keys_[i] == 0) return;
    i = (i + 1) & mask_;
  }
  // Backward-shift: move later entries of the run into the hole when their
  // home slot does not lie cyclically in (hole, their position].
  for (size_t j = (i + 1) & mask_; keys_[j] != 0; j = (j + 1) & mask_) {
    const size_t home = Slot(keys_[j]);
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    keys_[i] = keys_[j];
    values_[i] = values_[j];
    i = j;
  }
  keys_[i] = 0;
  values_[i] = -1;
  --size_;
}

}  // namespace servesim
