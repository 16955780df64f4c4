// Paged KV-cache block pool.
//
// Invariants (checked by CheckInvariants):
//  - every block is either free (on the free queue, ref_count 0) or in use
//    (ref_count > 0, not on the free queue);
//  - num_free() + num_used() == num_blocks().
// The free queue is a doubly-linked list whose order is the allocation (and,
// with prefix caching, eviction) order: Allocate takes from the head. As in
// vLLM (>= 0.33, v1/core/block_pool.py free_blocks), a freed block that holds
// no cached prefix goes to the head (reused first: it can never be hit), a
// cached one to the tail (least recently freed cached block evicted first).
// Without prefix caching every block goes to the head and none leaves the
// queue from the middle, so the queue is a stack, and which block a holder
// gets can change no output (nothing is ever looked up by block). Such a
// pool is counted: it keeps only how many blocks are free, and holders
// only how many they have (BlockList). A release of more blocks than are
// held aborts on the spot; blocks released while still listed by a holder
// (a double release) are caught by Scheduler::CheckInvariants: the
// holders' counts no longer sum to num_used().
#pragma once

#include <cstdint>
#include <vector>

#include "sim/kv/block_list.h"

namespace servesim {

class BlockPool {
 public:
  // counted: no block will ever be released as cached or taken from the
  // middle of the free queue (no prefix caching); see above.
  explicit BlockPool(int32_t num_blocks, bool counted = false);

  int32_t num_blocks() const { return num_blocks_; }
  int32_t num_free() const { return num_free_; }
  int32_t num_used() const { return num_blocks() - num_free_; }
  bool counted() const { return counted_; }
  // Not for a counted pool (it has no per-block state).
  int32_t ref_count(int32_t block) const;
  std::vector<int32_t> RefCounts() const;

  // Appends n fresh blocks (ref_count 1) to *out, or returns false and
  // changes nothing when fewer than n are free. The vector form: not for a
  // counted pool.
  bool Allocate(int32_t n, std::vector<int32_t>* out);
  // The count form: only a counted pool (KvCache hands an id pool's lists
  // to the vector forms itself).
  bool Allocate(int32_t n, BlockList* out) {
    if (!counted_) InvariantBroken("a count of blocks asked of an id pool", n);
    if (n > num_free_) return false;
    num_free_ -= n;
    out->AddCounted(n);
    return true;
  }
  // Drops one reference to each block, walking the sequence from its last
  // block to its first. Blocks reaching zero join the free queue: those
  // with cached[b] != 0 at the tail in that order (a chain's tail is evicted
  // before its prefix), the others at the head, the first reaching zero
  // nearest the head. `cached` may be null (nothing cached: all to the head).
  void Release(const std::vector<int32_t>& blocks, const uint64_t* cached);
  // The count form: only a counted pool.
  void Release(const BlockList& blocks);
  // Takes one more reference on `block`; a free block leaves the free queue
  // (a prefix-cache hit on a cached block nobody holds).
  void AddRef(int32_t block);

  // Aborts with a description if an invariant is broken. O(num_blocks).
  void CheckInvariants() const;

 private:
  // Prints what broke and aborts (also from the inline count form).
  [[noreturn]] static void InvariantBroken(const char* what, int32_t block);
  void PushTail(int32_t b);
  void InsertAfter(int32_t after, int32_t b);  // after = -1: at the head
  int32_t PopHead();
  void Unlink(int32_t b);

  int32_t num_blocks_;
  bool counted_;
  std::vector<int32_t> ref_;  // empty for a counted pool
  // Free-queue links, -1 = none; a block's two side by side (one cache
  // line per block on the hot pops and unlinks).
  struct Link {
    int32_t prev = -1, next = -1;
  };
  std::vector<Link> links_;
  int32_t head_ = -1, tail_ = -1;
  int32_t num_free_ = 0;
  std::vector<int32_t> to_head_;  // scratch for Release
};

}  // namespace servesim
