// The KV blocks one holder (a request, the decode group) has, in sequence
// order, in up to three parts:
//  - a shared run (PrefixCache): the leading blocks of a shared prefix,
//    held as one reference on a run object (-1: none);
//  - ids: blocks named by id (every block from an id pool: the reference
//    engine; PrefixCache's hashed blocks);
//  - counted: anonymous blocks -- every block from a counted pool (no
//    prefix caching: which block holds what can then change no output, so
//    the pool keeps a free count and nobody copies ids; BlockPool), or
//    PrefixCache's blocks that hold no hash: of these the first cached()
//    are registered privately, the rest not at all.
// Parts come in that order; size() is the number of blocks whichever pool
// they came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim {

class BlockList {
 public:
  int32_t size() const { return run_len_ + static_cast<int32_t>(ids_.size()) + counted_; }
  bool empty() const { return size() == 0; }
  // Ids of the named blocks (after the run, if any).
  const std::vector<int32_t>& ids() const { return ids_; }
  std::vector<int32_t>& ids() { return ids_; }
  int32_t operator[](size_t i) const { return ids_[i]; }
  // Anonymous blocks.
  int32_t counted() const { return counted_; }
  void AddCounted(int32_t n) { counted_ += n; }
  // PrefixCache's parts: the shared run and its length, the blocks before
  // the anonymous ones, and of those the privately registered.
  int32_t run() const { return run_; }
  int32_t run_len() const { return run_len_; }
  int32_t named() const { return run_len_ + static_cast<int32_t>(ids_.size()); }
  int32_t cached() const { return cached_; }
  void SetRun(int32_t run, int32_t len) {
    run_ = run;
    run_len_ = len;
  }
  // The first anonymous block becomes named `block`.
  void NameFirstCounted(int32_t block) {
    ids_.push_back(block);
    --counted_;
  }
  void AddCached(int32_t n) { cached_ += n; }

  void push_back(int32_t block) { ids_.push_back(block); }
  void clear() {
    ids_.clear();
    counted_ = 0;
    cached_ = 0;
    run_ = -1;
    run_len_ = 0;
  }
  // clear() and give back the ids' memory.
  void Free() {
    clear();
    ids_.shrink_to_fit();
  }
  void reserve(size_t n) { ids_.reserve(n); }
  size_t capacity() const { return ids_.capacity(); }
  // Moves its last n blocks to the end of *to (0 <= n <= size()): anonymous
  // ones (never privately registered ones) if it has any, else ids.
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
  int32_t cached_ = 0;
  int32_t run_ = -1;
  int32_t run_len_ = 0;
};

}  // namespace servesim
