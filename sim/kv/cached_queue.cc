// The fast prefix cache's eviction order (see cached_queue.h).
#include "sim/kv/cached_queue.h"

#include "sim/kv/kv_invariant.h"

namespace servesim {
namespace {

[[noreturn]] void Broken(const char* what, long long a, long long b) {
  KvInvariantBroken("CachedQueue", what, a, b);
}

}  // namespace

CachedQueue::CachedQueue(int32_t num_blocks)
    : num_blocks_(num_blocks),
      links_(static_cast<size_t>(num_blocks)),
      on_queue_(static_cast<size_t>(num_blocks), 0) {}

void CachedQueue::Append(int32_t node) {
  links_[node].prev = tail_;
  links_[node].next = -1;
  if (tail_ >= 0) links_[tail_].next = node; else head_ = node;
  tail_ = node;
}

void CachedQueue::InsertAfter(int32_t prev, int32_t node) {
  const int32_t next = prev >= 0 ? links_[prev].next : head_;
  links_[node].prev = prev;
  links_[node].next = next;
  if (prev >= 0) links_[prev].next = node; else head_ = node;
  if (next >= 0) links_[next].prev = node; else tail_ = node;
}

void CachedQueue::Remove(int32_t node) {
  const Link l = links_[node];
  if (l.prev >= 0) links_[l.prev].next = l.next; else head_ = l.next;
  if (l.next >= 0) links_[l.next].prev = l.prev; else tail_ = l.prev;
  links_[node] = Link{};
}

void CachedQueue::PushBlock(int32_t block) {
  if (on_queue_[block]) Broken("block queued twice", block, 0);
  on_queue_[block] = 1;
  Append(block);
  ++blocks_;
}

void CachedQueue::PushRun(int32_t n) {
  blocks_ += n;
  // Runs side by side are one run: their blocks are interchangeable.
  if (tail_ >= 0 && IsAnonymousRun(tail_)) {
    RunCount(tail_) += n;
    return;
  }
  Append(NewRunNode(n, -1));
}

int32_t CachedQueue::NewRunNode(int32_t n, int32_t tag) {
  int32_t node;
  if (free_runs_.empty()) {
    node = static_cast<int32_t>(links_.size());
    links_.push_back(Link{});
    run_count_.push_back(0);
    parked_tag_.push_back(-1);
  } else {
    node = free_runs_.back();
    free_runs_.pop_back();
  }
  RunCount(node) = n;
  parked_tag_[node - num_blocks_] = tag;
  return node;
}

void CachedQueue::FreeRunNode(int32_t node) {
  RunCount(node) = 0;
  parked_tag_[node - num_blocks_] = -1;
  free_runs_.push_back(node);
}

int32_t CachedQueue::PushParked(int32_t tag, int32_t n) {
  if (tag < 0 || n <= 0) Broken("bad parked run", tag, n);
  const int32_t node = NewRunNode(n, tag);
  Append(node);
  blocks_ += n;
  return node;
}

void CachedQueue::RemoveParked(int32_t node) {
  if (!IsRun(node) || IsAnonymousRun(node)) Broken("not a parked run", node, 0);
  blocks_ -= RunCount(node);
  Remove(node);
  FreeRunNode(node);
}

void CachedQueue::Unpark(int32_t node, const int32_t* blocks, int32_t n) {
  if (!IsRun(node) || IsAnonymousRun(node) || RunCount(node) != n) {
    Broken("unpark of a parked run of another size", node, n);
  }
  int32_t prev = links_[node].prev;
  Remove(node);
  FreeRunNode(node);
  for (int32_t i = 0; i < n; ++i) {
    if (on_queue_[blocks[i]]) Broken("block queued twice", blocks[i], 0);
    on_queue_[blocks[i]] = 1;
    InsertAfter(prev, blocks[i]);
    prev = blocks[i];
  }
}

void CachedQueue::Unlink(int32_t block) {
  if (!on_queue_[block]) Broken("unlink of a block not queued", block, 0);
  on_queue_[block] = 0;
  Remove(block);
  --blocks_;
}

int32_t CachedQueue::TakeFromHeadRun(int32_t n) {
  const int32_t node = head_;
  if (!IsAnonymousRun(node)) Broken("head is no anonymous run", node, 0);
  int32_t& count = RunCount(node);
  if (n < count) {
    count -= n;
    blocks_ -= n;
    return n;
  }
  const int32_t taken = count;
  blocks_ -= taken;
  Remove(node);
  FreeRunNode(node);
  return taken;
}

void CachedQueue::CheckInvariants() const {
  int32_t count = 0, last = -1, entries = 0;
  const auto limit = static_cast<int32_t>(links_.size());
  for (int32_t n = head_; n >= 0; n = links_[n].next) {
    if (++entries > limit) Broken("queue has a cycle", n, 0);
    if (links_[n].prev != last) Broken("queue links disagree", n, last);
    if (IsRun(n)) {
      const int32_t c = run_count_[n - num_blocks_];
      if (c <= 0) Broken("empty run queued", n, c);
      count += c;
    } else {
      if (!on_queue_[n]) Broken("queued block not marked", n, 0);
      ++count;
    }
    last = n;
  }
  if (last != tail_) Broken("queue tail is wrong", tail_, last);
  if (count != blocks_) Broken("queue block count", count, blocks_);
  int32_t marked = 0;
  for (uint8_t m : on_queue_) marked += m;
  if (marked + static_cast<int32_t>(run_count_.size()) - static_cast<int32_t>(free_runs_.size()) !=
      entries) {
    Broken("queue entries", entries, marked);
  }
}

}  // namespace servesim
