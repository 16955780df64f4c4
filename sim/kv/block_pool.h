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
// queue from the middle, so the queue is a stack: kept as a contiguous
// array then (the same blocks in the same order, without the dependent
// loads of a linked list), and no per-block state is kept: every block not
// on the stack has exactly one reference (nothing else takes one), so
// Allocate and Release only copy block ids. A double release or a foreign
// id on the stack is then caught by CheckInvariants (a block twice on the
// stack, or more free blocks than blocks), not on the spot.
#pragma once

#include <cstdint>
#include <vector>

namespace servesim {

class BlockPool {
 public:
  // stack_only: no block will ever be released as cached or taken from
  // the middle of the free queue (no prefix caching).
  explicit BlockPool(int32_t num_blocks, bool stack_only = false);

  int32_t num_blocks() const { return num_blocks_; }
  int32_t num_free() const { return num_free_; }
  int32_t num_used() const { return num_blocks() - num_free_; }
  // O(1); O(free blocks) for a stack-only pool (checks and tests only:
  // RefCounts gives them all in one pass).
  int32_t ref_count(int32_t block) const;
  std::vector<int32_t> RefCounts() const;

  // Appends n fresh blocks (ref_count 1) to *out, or returns false and
  // changes nothing when fewer than n are free.
  bool Allocate(int32_t n, std::vector<int32_t>* out);
  // Drops one reference to each block, walking the sequence from its last
  // block to its first. Blocks reaching zero join the free queue: those
  // with cached[b] != 0 at the tail in that order (a chain's tail is evicted
  // before its prefix), the others at the head, the first reaching zero
  // nearest the head. `cached` may be null (nothing cached: all to the head).
  void Release(const std::vector<int32_t>& blocks, const uint64_t* cached);
  // Takes one more reference on `block`; a free block leaves the free queue
  // (a prefix-cache hit on a cached block nobody holds).
  void AddRef(int32_t block);

  // Aborts with a description if an invariant is broken. O(num_blocks).
  void CheckInvariants() const;

 private:
  void PushTail(int32_t b);
  void InsertAfter(int32_t after, int32_t b);  // after = -1: at the head
  int32_t PopHead();
  void Unlink(int32_t b);

  int32_t num_blocks_;
  std::vector<int32_t> ref_;  // empty for a stack-only pool
  bool stack_only_;
  std::vector<int32_t> stack_;        // stack_only: free queue, head last
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
