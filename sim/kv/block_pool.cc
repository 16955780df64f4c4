// Paged KV-cache block pool (see block_pool.h for the invariants).
#include "sim/kv/block_pool.h"

#include "sim/kv/kv_invariant.h"

namespace servesim {

void BlockPool::InvariantBroken(const char* what, int32_t block) {
  KvInvariantBroken("BlockPool", what, block);
}

BlockPool::BlockPool(int32_t num_blocks, bool counted)
    : num_blocks_(num_blocks), counted_(counted) {
  if (counted_) {
    num_free_ = num_blocks;
    return;
  }
  ref_.assign(num_blocks, 0);
  links_.assign(num_blocks, Link{});
  for (int32_t b = 0; b < num_blocks; ++b) PushTail(b);
}

void BlockPool::PushTail(int32_t b) {
  links_[b].prev = tail_;
  links_[b].next = -1;
  if (tail_ >= 0) links_[tail_].next = b; else head_ = b;
  tail_ = b;
  ++num_free_;
}

void BlockPool::InsertAfter(int32_t after, int32_t b) {
  const int32_t next = after >= 0 ? links_[after].next : head_;
  links_[b].prev = after;
  links_[b].next = next;
  if (after >= 0) links_[after].next = b; else head_ = b;
  if (next >= 0) links_[next].prev = b; else tail_ = b;
  ++num_free_;
}

void BlockPool::Unlink(int32_t b) {
  const Link l = links_[b];
  if (l.prev >= 0) links_[l.prev].next = l.next; else head_ = l.next;
  if (l.next >= 0) links_[l.next].prev = l.prev; else tail_ = l.prev;
  links_[b] = Link{};
  --num_free_;
}

int32_t BlockPool::ref_count(int32_t b) const {
  if (counted_) InvariantBroken("reference count asked of a counted pool", b);
  return ref_[b];
}

std::vector<int32_t> BlockPool::RefCounts() const {
  if (counted_) InvariantBroken("reference counts asked of a counted pool", -1);
  return ref_;
}

void BlockPool::AddRef(int32_t b) {
  if (counted_) InvariantBroken("reference taken on a counted pool's block", b);
  if (ref_[b] == 0) Unlink(b);
  ++ref_[b];
}

int32_t BlockPool::PopHead() {
  const int32_t b = head_;
  head_ = links_[b].next;
  if (head_ >= 0) links_[head_].prev = -1; else tail_ = -1;
  links_[b] = Link{};
  --num_free_;
  return b;
}

bool BlockPool::Allocate(int32_t n, std::vector<int32_t>* out) {
  if (counted_) InvariantBroken("block ids asked of a counted pool", n);
  if (n > num_free_) return false;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t b = PopHead();
    if (ref_[b] != 0) InvariantBroken("free block has references", b);
    ref_[b] = 1;
    out->push_back(b);
  }
  return true;
}

void BlockPool::Release(const std::vector<int32_t>& blocks,
                        const uint64_t* cached) {
  if (counted_) InvariantBroken("block ids released to a counted pool",
                                blocks.empty() ? -1 : blocks[0]);
  to_head_.clear();
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const int32_t b = *it;
    if (b < 0 || b >= num_blocks() || ref_[b] <= 0) {
      InvariantBroken("release of a block that is not in use", b);
    }
    if (--ref_[b] != 0) continue;
    if (cached != nullptr && cached[b] != 0) {
      PushTail(b);
    } else {
      to_head_.push_back(b);
    }
  }
  // Prepend as a run: the first block freed ends up at the head.
  int32_t after = -1;
  for (int32_t b : to_head_) {
    InsertAfter(after, b);
    after = b;
  }
}

void BlockPool::Release(const BlockList& blocks) {
  if (!counted_) InvariantBroken("a count of blocks released to an id pool", blocks.counted());
  if (!blocks.ids().empty()) {
    InvariantBroken("block ids released to a counted pool", blocks[0]);
  }
  num_free_ += blocks.counted();
  if (num_free_ > num_blocks_) InvariantBroken("more blocks freed than held", num_free_);
}

void BlockPool::CheckInvariants() const {
  if (counted_) {
    // Who holds how many: Scheduler::CheckInvariants.
    if (num_free_ < 0 || num_free_ > num_blocks_) InvariantBroken("free count out of range", num_free_);
    return;
  }
  std::vector<char> on_queue(static_cast<size_t>(num_blocks_), 0);
  int32_t count = 0, last = -1;
  for (int32_t b = head_; b >= 0; b = links_[b].next) {
    if (on_queue[b]) InvariantBroken("free queue has a cycle", b);
    if (links_[b].prev != last) InvariantBroken("free queue links disagree", b);
    if (ref_[b] != 0) InvariantBroken("block on free queue is in use", b);
    on_queue[b] = 1;
    last = b;
    ++count;
  }
  if (last != tail_) InvariantBroken("free queue tail is wrong", tail_);
  if (count != num_free_) InvariantBroken("free count mismatch", count);
  for (int32_t b = 0; b < num_blocks(); ++b) {
    if (!on_queue[b] && ref_[b] <= 0) {
      InvariantBroken("block neither free nor in use", b);
    }
  }
}

}  // namespace servesim
