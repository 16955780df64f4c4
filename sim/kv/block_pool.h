// Paged KV-cache block pool.
//
// Invariants (checked by CheckInvariants):
//  - every block is either free (on the free queue, ref_count 0) or in use
//    (ref_count > 0, not on the free queue);
//  - num_free() + num_used() == num_blocks().
// The free queue is a doubly-linked list whose order is the allocation (and,
// with prefix caching, eviction) order: Allocate takes from the head, Free
// appends to the tail, so the least recently freed block is reused first.
#pragma once

#include <cstdint>
#include <vector>

namespace servesim {

class BlockPool {
 public:
  explicit BlockPool(int32_t num_blocks);

  int32_t num_blocks() const { return static_cast<int32_t>(ref_.size()); }
  int32_t num_free() const { return num_free_; }
  int32_t num_used() const { return num_blocks() - num_free_; }
  int32_t ref_count(int32_t block) const { return ref_[block]; }

  // Appends n fresh blocks (ref_count 1) to *out, or returns false and
  // changes nothing when fewer than n are free.
  bool Allocate(int32_t n, std::vector<int32_t>* out);
  // Drops one reference to each block; blocks reaching zero go to the tail
  // of the free queue, in reverse order (a sequence's last block first, so
  // its prefix stays cached longest).
  void Release(const std::vector<int32_t>& blocks);
  // Takes one more reference on `block`; a free block leaves the free queue
  // (a prefix-cache hit on a cached block nobody holds).
  void AddRef(int32_t block);

  // Aborts with a description if an invariant is broken. O(num_blocks).
  void CheckInvariants() const;

 private:
  void PushTail(int32_t b);
  int32_t PopHead();
  void Unlink(int32_t b);

  std::vector<int32_t> ref_;
  std::vector<int32_t> prev_, next_;  // free-queue links, -1 = none
  int32_t head_ = -1, tail_ = -1;
  int32_t num_free_ = 0;
};

}  // namespace servesim
