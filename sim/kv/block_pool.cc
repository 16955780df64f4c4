// Paged KV-cache block pool (see block_pool.h for the invariants).
#include "sim/kv/block_pool.h"

#include <cstdio>
#include <cstdlib>

namespace servesim {
namespace {

[[noreturn]] void InvariantBroken(const char* what, int32_t block) {
  std::fprintf(stderr, "servesim: BlockPool invariant broken: %s (block %d)\n",
               what, block);
  std::abort();
}

}  // namespace

BlockPool::BlockPool(int32_t num_blocks, bool stack_only)
    : ref_(num_blocks, 0), stack_only_(stack_only) {
  if (stack_only_) {
    stack_.reserve(num_blocks);
    for (int32_t b = num_blocks - 1; b >= 0; --b) stack_.push_back(b);
    num_free_ = num_blocks;
    return;
  }
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

void BlockPool::AddRef(int32_t b) {
  if (ref_[b] == 0) {
    if (stack_only_) InvariantBroken("free block taken from a stack-only pool", b);
    Unlink(b);
  }
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
  if (n > num_free_) return false;
  if (stack_only_) {
    for (int32_t i = 0; i < n; ++i) {
      const int32_t b = stack_.back();
      stack_.pop_back();
      if (ref_[b] != 0) InvariantBroken("free block has references", b);
      ref_[b] = 1;
      out->push_back(b);
    }
    num_free_ -= n;
    return true;
  }
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
  to_head_.clear();
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const int32_t b = *it;
    if (b < 0 || b >= num_blocks() || ref_[b] <= 0) {
      InvariantBroken("release of a block that is not in use", b);
    }
    if (--ref_[b] != 0) continue;
    if (stack_only_) {
      if (cached != nullptr && cached[b] != 0) {
        InvariantBroken("cached block released to a stack-only pool", b);
      }
      to_head_.push_back(b);
    } else if (cached != nullptr && cached[b] != 0) {
      PushTail(b);
    } else {
      to_head_.push_back(b);
    }
  }
  // Prepend as a run: the first block freed ends up at the head.
  if (stack_only_) {
    stack_.insert(stack_.end(), to_head_.rbegin(), to_head_.rend());
    num_free_ += static_cast<int32_t>(to_head_.size());
    return;
  }
  int32_t after = -1;
  for (int32_t b : to_head_) {
    InsertAfter(after, b);
    after = b;
  }
}

void BlockPool::CheckInvariants() const {
  std::vector<char> on_queue(ref_.size(), 0);
  int32_t count = 0, last = -1;
  for (int32_t b : stack_) {
    if (on_queue[b]) InvariantBroken("block twice on the free stack", b);
    if (ref_[b] != 0) InvariantBroken("block on free stack is in use", b);
    on_queue[b] = 1;
    ++count;
  }
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
