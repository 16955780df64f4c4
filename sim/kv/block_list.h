// The KV blocks one holder (a request, the decode group) has, in sequence
// order: their ids from a pool that hands out ids (prefix caching, the
// reference engine), or only how many from a counted pool (no prefix
// caching: which block holds what can then change no output, so the pool
// keeps a free count and nobody copies ids; BlockPool).
//
// Invariant: one of the two is empty, so size() is the number of blocks
// whichever pool they came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

class BlockList {
 public:
  int32_t size() const { return static_cast<int32_t>(ids_.size()) + counted_; }
  bool empty() const { return size() == 0; }
  // Ids of the blocks from an id-giving pool (empty for a counted one).
  const std::vector<int32_t>& ids() const { return ids_; }
  std::vector<int32_t>& ids() { return ids_; }
  int32_t operator[](size_t i) const { return ids_[i]; }
  // Blocks from a counted pool.
  int32_t counted() const { return counted_; }
  void AddCounted(int32_t n) { counted_ += n; }

  void push_back(int32_t block) { ids_.push_back(block); }
  void clear() {
    ids_.clear();
    counted_ = 0;
  }
  // clear() and give back the ids' memory.
  void Free() {
    clear();
    ids_.shrink_to_fit();
  }
  void reserve(size_t n) { ids_.reserve(n); }
  size_t capacity() const { return ids_.capacity(); }
  // Moves its last n blocks to the end of *to (0 <= n <= size()).
  void MoveTail(int32_t n, BlockList* to) {
    if (counted_ > 0) {
      counted_ -= n;
      to->counted_ += n;
      return;
    }
    to->ids_.insert(to->ids_.end(), ids_.end() - n, ids_.end());
    ids_.resize(ids_.size() - static_cast<size_t>(n));
  }

 private:
  std::vector<int32_t> ids_;
  int32_t counted_ = 0;
};

}  // namespace servesim
