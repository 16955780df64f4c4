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
    : num_blocks_(num_blocks), stack_only_(stack_only) {
  if (stack_only_) {
    stack_.reserve(num_blocks);
    for (int32_t b = num_blocks - 1; b >= 0; --b) stack_.push_back(b);
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
  if (!stack_only_) return ref_[b];
  for (int32_t f : stack_) {
    if (f == b) return 0;
  }
  return 1;
}

std::vector<int32_t> BlockPool::RefCounts() const {
  if (!stack_only_) return ref_;
  std::vector<int32_t> refs(static_cast<size_t>(num_blocks_), 1);
  for (int32_t b : stack_) refs[b] = 0;
  return refs;
}

void BlockPool::AddRef(int32_t b) {
  if (stack_only_) InvariantBroken("reference taken on a stack-only pool's block", b);
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
  if (n > num_free_) return false;
  if (stack_only_) {
    // The top n, top first.
    out->insert(out->end(), stack_.rbegin(), stack_.rbegin() + n);
    stack_.resize(stack_.size() - static_cast<size_t>(n));
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
  if (stack_only_) {
    // Every block has one reference, so all are freed, the last first
    // (it ends up on top; the first block freed is the head).
    for (int32_t b : blocks) {
      if (b < 0 || b >= num_blocks_) {
        InvariantBroken("release of a block that is not in use", b);
      }
    }
    if (cached != nullptr) {
      for (int32_t b : blocks) {
        if (cached[b] != 0) InvariantBroken("cached block released to a stack-only pool", b);
      }
    }
    stack_.insert(stack_.end(), blocks.begin(), blocks.end());
    num_free_ += static_cast<int32_t>(blocks.size());
    if (num_free_ > num_blocks_) InvariantBroken("more blocks freed than held", num_free_);
    return;
  }
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

void BlockPool::CheckInvariants() const {
  std::vector<char> on_queue(static_cast<size_t>(num_blocks_), 0);
  int32_t count = 0, last = -1;
  for (int32_t b : stack_) {
    if (b < 0 || b >= num_blocks_) InvariantBroken("no such block on the free stack", b);
    if (on_queue[b]) InvariantBroken("block twice on the free stack", b);
    on_queue[b] = 1;
    ++count;
  }
  if (stack_only_) {
    // Every block off the stack holds one reference.
    if (count != num_free_) InvariantBroken("free count mismatch", count);
    return;
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
