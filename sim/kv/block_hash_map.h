// Flat open-addressing map from block hash (never 0) to block id, for the
// prefix cache's hot path (one lookup per full block). Linear probing in a
// power-of-two table at most half full; deletion shifts later entries of
// the probe run back, so no tombstones accumulate. Key 0 marks empty slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

class BlockHashMap {
 public:
  // Sized for `max_entries`; inserting more is a bug (the cache never holds
  // more registered blocks than it has blocks).
  explicit BlockHashMap(size_t max_entries);

  // Block id of `key`, or -1.
  int32_t Find(uint64_t key) const {
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == 0) return -1;
    }
  }
  // Inserts key -> block unless key is present; true if inserted.
  bool Insert(uint64_t key, int32_t block);
  // Points the present `key` at `block` (aborts if key is absent).
  void Assign(uint64_t key, int32_t block);
  void Erase(uint64_t key);
  size_t size() const { return size_; }
  // Hints the cache to load `key`'s home slot (a lookup coming soon).
  void Prefetch(uint64_t key) const { __builtin_prefetch(&slots_[Slot(key)]); }

 private:
  size_t Slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  struct SlotEntry {
    uint64_t key = 0;
    int32_t value = -1;
  };
  std::vector<SlotEntry> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace servesim
