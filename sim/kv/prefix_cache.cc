// The fast engine's prefix cache (see prefix_cache.h).
#include "sim/kv/prefix_cache.h"

#include <algorithm>

#include "sim/kv/kv_invariant.h"

namespace servesim {
namespace {

[[noreturn]] void Broken(const char* what, long long a, long long b) {
  KvInvariantBroken("PrefixCache", what, a, b);
}

}  // namespace

PrefixCache::PrefixCache(int32_t num_blocks)
    : num_blocks_(num_blocks),
      ref_(static_cast<size_t>(num_blocks), 0),
      hash_(static_cast<size_t>(num_blocks), 0),
      dup_next_(static_cast<size_t>(num_blocks), -1),
      memo_of_(static_cast<size_t>(num_blocks), -1),
      parked_in_(static_cast<size_t>(num_blocks), -1),
      by_hash_(static_cast<size_t>(num_blocks)),
      queue_(num_blocks),
      uncached_(num_blocks),
      memo_index_(memo_capacity_) {
  spare_.reserve(static_cast<size_t>(num_blocks));
  for (int32_t b = num_blocks; b-- > 0;) spare_.push_back(b);
}

int32_t PrefixCache::CountHits(const uint64_t* hashes, int32_t n,
                               std::vector<int32_t>* found) const {
  if (found != nullptr) found->clear();
  // The probes are independent: the slots of the next few are loaded
  // while this one is looked up.
  constexpr int32_t kAhead = 8;
  for (int32_t i = 0; i < std::min(n, kAhead); ++i) by_hash_.Prefetch(hashes[i]);
  int32_t hits = 0;
  for (; hits < n; ++hits) {
    if (hits + kAhead < n) by_hash_.Prefetch(hashes[hits + kAhead]);
    const int32_t b = by_hash_.Find(hashes[hits]);
    if (b < 0) break;
    if (found != nullptr) found->push_back(b);
  }
  return hits;
}

int32_t PrefixCache::NewRun() {
  if (!free_runs_.empty()) {
    const int32_t run = free_runs_.back();
    free_runs_.pop_back();
    return run;
  }
  runs_.emplace_back();
  return static_cast<int32_t>(runs_.size()) - 1;
}

int32_t PrefixCache::NewMemo(uint64_t key) {
  if (key == 0) Broken("memo key 0", 0, 0);
  const auto slot = static_cast<int32_t>(memos_.size());
  memos_.emplace_back();
  memos_.back().key = key;
  if (memos_.size() > memo_capacity_) {  // a table twice the size
    memo_capacity_ *= 2;
    memo_index_ = BlockHashMap(memo_capacity_);
    for (int32_t i = 0; i < slot; ++i) memo_index_.Insert(memos_[i].key, i);
  }
  memo_index_.Insert(key, slot);
  return slot;
}

void PrefixCache::ForgetMiss(int32_t memo) {
  Memo& m = memos_[memo];
  if (m.miss == 0) return;
  const auto [first, last] = misses_.equal_range(m.miss);
  for (auto it = first; it != last; ++it) {
    if (it->second == memo) {
      misses_.erase(it);
      break;
    }
  }
  m.miss = 0;
}

void PrefixCache::DropRun(int32_t run) {
  Run& s = runs_[run];
  s.memo = -1;
  if (s.holders != 0) return;
  if (s.parked_node >= 0) LayOut(run);
  free_runs_.push_back(run);
}

void PrefixCache::LayOut(int32_t run) {
  Run& s = runs_[run];
  queue_.Unpark(s.parked_node, s.parked.data(), static_cast<int32_t>(s.parked.size()));
  for (int32_t b : s.parked) parked_in_[b] = -1;
  s.parked.clear();
  s.parked_node = -1;
}

void PrefixCache::Unqueue(int32_t b) {
  if (parked_in_[b] >= 0) LayOut(parked_in_[b]);
  queue_.Unlink(b);
}

int32_t PrefixCache::MemoisedRun(uint64_t key, int32_t n) const {
  const int32_t slot = memo_index_.Find(key);
  if (slot < 0) return kNoRun;
  const Memo& m = memos_[slot];
  return m.valid && m.n == n ? m.run : kNoRun;
}

int32_t PrefixCache::FindRun(uint64_t key, const uint64_t* hashes, int32_t n) {
  int32_t slot = memo_index_.Find(key);
  if (slot < 0) slot = NewMemo(key);
  Memo& m = memos_[slot];
  if (m.valid && m.n == n) return m.run;
  if (m.run >= 0) DropRun(m.run);
  ForgetMiss(slot);
  const int32_t hits = CountHits(hashes, n, &scratch_);
  m.n = n;
  m.valid = true;
  m.run = -1;
  m.miss = hits < n ? hashes[hits] : 0;
  if (m.miss != 0) misses_.emplace(m.miss, slot);
  if (hits == 0) return -1;
  m.run = NewRun();
  Run& s = runs_[m.run];
  s.blocks = scratch_;
  s.hashes.assign(hashes, hashes + std::min(hits + 1, n));
  s.holders = 0;
  s.memo = slot;
  for (int32_t b : s.blocks) memo_of_[b] = slot;
  return m.run;
}

void PrefixCache::Take(int32_t n, BlockList* blocks) {
  const int32_t uncached = std::min(n, uncached_);
  uncached_ -= uncached;
  for (int32_t rest = n - uncached; rest > 0;) {
    if (const int32_t run = queue_.HeadParked(); run >= 0) {
      LayOut(run);  // its blocks are evicted one by one
      continue;
    }
    const int32_t b = queue_.HeadBlock();
    if (b >= 0) {
      queue_.Unlink(b);
      Evict(b);
      --rest;
      continue;
    }
    // Private blocks: evicted without a trace but the log's zeros.
    const int32_t k = queue_.TakeFromHeadRun(rest);
    if (eviction_log_ != nullptr) eviction_log_->insert(eviction_log_->end(), k, 0);
    evictions_ += k;
    rest -= k;
  }
  blocks->AddCounted(n);
}

void PrefixCache::Evict(int32_t b) {
  if (ref_[b] != 0) Broken("free block has references", b, ref_[b]);
  const uint64_t h = hash_[b];
  if (eviction_log_ != nullptr) eviction_log_->push_back(h);
  const int32_t first = by_hash_.Find(h);
  if (first == b) {
    if (dup_next_[b] >= 0) {
      by_hash_.Assign(h, dup_next_[b]);
    } else {
      by_hash_.Erase(h);
    }
  } else {
    int32_t p = first;
    while (dup_next_[p] != b) p = dup_next_[p];
    dup_next_[p] = dup_next_[b];
  }
  if (memo_of_[b] >= 0) {  // its run would no longer be found
    memos_[memo_of_[b]].valid = false;
    memo_of_[b] = -1;
  }
  dup_next_[b] = -1;
  hash_[b] = 0;
  spare_.push_back(b);
  ++evictions_;
}

bool PrefixCache::AcquireRun(int32_t run, int32_t fresh, int32_t reserve,
                             BlockList* blocks) {
  if (run < 0) return AcquireFound(nullptr, 0, fresh, reserve, blocks);
  if (!blocks->empty()) Broken("a shared run acquired by a list holding blocks", run, blocks->size());
  Run& s = runs_[run];
  const int32_t need = std::max(fresh, reserve);
  const auto len = static_cast<int32_t>(s.blocks.size());
  if (s.holders == 0 && need > num_free() - len) {
    // Only when it is tight can the free blocks it takes decide it.
    int32_t on_queue = 0;
    for (int32_t b : s.blocks) on_queue += ref_[b] == 0;
    if (need > num_free() - on_queue) return false;
  } else if (need > num_free()) {
    return false;
  }
  if (s.holders++ == 0) {
    // Its parked entry, if it is still there, leaves the queue whole;
    // blocks freed since by other holders leave one by one.
    for (int32_t b : s.blocks) {
      if (ref_[b]++ != 0) continue;
      if (parked_in_[b] == run) {
        parked_in_[b] = -1;
      } else {
        Unqueue(b);
      }
    }
    if (s.parked_node >= 0) {
      queue_.RemoveParked(s.parked_node);
      s.parked.clear();
      s.parked_node = -1;
    }
  }
  blocks->SetRun(run, static_cast<int32_t>(s.blocks.size()));
  Take(fresh, blocks);
  return true;
}

bool PrefixCache::AcquireFound(const int32_t* hit_blocks, int32_t hits, int32_t fresh,
                               int32_t reserve, BlockList* blocks) {
  if (hits > 0 && blocks->counted() != 0) {
    Broken("named hits after anonymous blocks", hits, blocks->counted());
  }
  int32_t on_queue = 0;
  for (int32_t i = 0; i < hits; ++i) on_queue += ref_[hit_blocks[i]] == 0;
  if (std::max(fresh, reserve) > num_free() - on_queue) return false;
  for (int32_t i = 0; i < hits; ++i) {
    const int32_t b = hit_blocks[i];
    if (ref_[b]++ == 0) Unqueue(b);
    blocks->push_back(b);
  }
  Take(fresh, blocks);
  return true;
}

void PrefixCache::Name(int32_t b, uint64_t hash) {
  if (!by_hash_.Insert(hash, b)) {
    int32_t last = by_hash_.Find(hash);
    while (dup_next_[last] >= 0) last = dup_next_[last];
    dup_next_[last] = b;
  } else if (!misses_.empty()) {
    // Memos whose first miss this was would now find more.
    const auto [first, last] = misses_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      memos_[it->second].valid = false;
      memos_[it->second].miss = 0;
    }
    misses_.erase(first, last);
  }
  hash_[b] = hash;
  dup_next_[b] = -1;
  ref_[b] = 1;
}

void PrefixCache::Register(BlockList* blocks, int32_t i, uint64_t hash) {
  if (i != blocks->named() || blocks->cached() != 0 || blocks->counted() == 0) {
    Broken("register out of sequence order", i, blocks->named());
  }
  const int32_t b = spare_.back();
  spare_.pop_back();
  Name(b, hash);
  blocks->NameFirstCounted(b);
}

void PrefixCache::RegisterPrivate(BlockList* blocks, int32_t i, int32_t n) {
  if (i != blocks->named() + blocks->cached() || blocks->cached() + n > blocks->counted()) {
    Broken("private register out of sequence order", i, n);
  }
  blocks->AddCached(n);
}

void PrefixCache::Publish(BlockList* blocks, int32_t i, const uint64_t* hashes) {
  if (blocks->cached() > 0 && i != blocks->named()) {
    Broken("publish out of sequence order", i, blocks->named());
  }
  const int32_t n = blocks->cached();
  blocks->AddCached(-n);
  for (int32_t k = 0; k < n; ++k) {
    const int32_t b = spare_.back();
    spare_.pop_back();
    Name(b, hashes[i + k]);
    blocks->NameFirstCounted(b);
  }
}

void PrefixCache::ReleaseRun(int32_t run) {
  Run& s = runs_[run];
  if (s.holders <= 0) Broken("release of a run nobody holds", run, s.holders);
  if (--s.holders != 0) return;
  if (s.memo < 0) {  // no lookup finds it again: its blocks go one by one
    for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) {
      if (--ref_[*it] == 0) queue_.PushBlock(*it);
    }
    free_runs_.push_back(run);
    return;
  }
  // Those it freed reach the tail together, in the order the reverse
  // walk gives them: parked as one entry.
  for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) {
    if (--ref_[*it] == 0) {
      s.parked.push_back(*it);
      parked_in_[*it] = run;
    }
  }
  if (!s.parked.empty()) {
    s.parked_node = queue_.PushParked(run, static_cast<int32_t>(s.parked.size()));
  }
}

void PrefixCache::Release(const BlockList& blocks) {
  // As KvCache's walk from the last block to the first: unregistered ones
  // to the head (a count), private ones to the tail, then the named.
  uncached_ += blocks.counted() - blocks.cached();
  if (blocks.cached() > 0) queue_.PushRun(blocks.cached());
  const std::vector<int32_t>& ids = blocks.ids();
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    const int32_t b = *it;
    if (b < 0 || b >= num_blocks_ || ref_[b] <= 0) Broken("release of a block not in use", b, 0);
    if (--ref_[b] == 0) queue_.PushBlock(b);
  }
  if (blocks.run() >= 0) ReleaseRun(blocks.run());
  if (num_free() > num_blocks_) Broken("more blocks freed than held", num_free(), num_blocks_);
}

void PrefixCache::CheckInvariants() const {
  queue_.CheckInvariants();
  int32_t named = 0, chained = 0, heads = 0, on_queue = 0, parked = 0;
  for (int32_t b = 0; b < num_blocks_; ++b) {
    if (ref_[b] < 0) Broken("negative reference count", b, ref_[b]);
    if (hash_[b] == 0) {
      if (ref_[b] != 0 || queue_.contains(b) || parked_in_[b] >= 0 || dup_next_[b] != -1) {
        Broken("unnamed block in use, queued or chained", b, ref_[b]);
      }
      continue;
    }
    ++named;
    const bool is_parked = parked_in_[b] >= 0;
    if (is_parked && queue_.contains(b)) Broken("block queued alone and parked", b, parked_in_[b]);
    if ((queue_.contains(b) || is_parked) != (ref_[b] == 0)) {
      Broken("named block queued iff free", b, ref_[b]);
    }
    on_queue += queue_.contains(b) || is_parked;
    parked += is_parked;
    int32_t p = by_hash_.Find(hash_[b]);
    if (p < 0) Broken("named block's hash not in the map", b, 0);
    if (p == b) {
      ++heads;
      for (int32_t q = b; q >= 0; q = dup_next_[q]) {
        if (hash_[q] != hash_[b]) Broken("chain mixes hashes", b, q);
        if (++chained > num_blocks_) Broken("chain has a cycle", b, q);
      }
    } else {
      while (p >= 0 && p != b) p = dup_next_[p];
      if (p != b) Broken("block not reachable under its hash", b, 0);
    }
  }
  if (named != chained || heads != static_cast<int32_t>(by_hash_.size())) {
    Broken("map and blocks disagree", named, static_cast<long long>(by_hash_.size()));
  }
  if (static_cast<int32_t>(spare_.size()) != num_blocks_ - named) {
    Broken("spare ids", static_cast<long long>(spare_.size()), num_blocks_ - named);
  }
  for (int32_t b : spare_) {
    if (hash_[b] != 0) Broken("spare id of a named block", b, 0);
  }
  int32_t listed = 0;
  for (int32_t run = 0; run < static_cast<int32_t>(runs_.size()); ++run) {
    const Run& s = runs_[run];
    if ((s.parked_node >= 0) == s.parked.empty() || (s.parked_node >= 0 && s.holders != 0)) {
      Broken("parked run's entry, blocks or holders", run, s.holders);
    }
    for (int32_t b : s.parked) {
      if (parked_in_[b] != run) Broken("parked block names another run", b, parked_in_[b]);
    }
    listed += static_cast<int32_t>(s.parked.size());
  }
  if (listed != parked) Broken("parked blocks", listed, parked);
  if (uncached_ < 0 || num_free() > num_blocks_ || on_queue > queue_.blocks()) {
    Broken("free counts", uncached_, queue_.blocks());
  }
  for (const Memo& m : memos_) {
    if (m.valid && m.miss != 0 && by_hash_.Find(m.miss) >= 0) Broken("memo's miss is a hit", m.run, 0);
    if (!m.valid || m.run < 0) continue;
    const Run& s = runs_[m.run];
    const auto hits = static_cast<int32_t>(s.blocks.size());
    for (int32_t i = 0; i < hits; ++i) {
      if (by_hash_.Find(s.hashes[i]) != s.blocks[i]) Broken("memoised run is stale", m.run, i);
      if (s.holders > 0 && ref_[s.blocks[i]] <= 0) Broken("held run's block is free", m.run, i);
    }
    if (hits < m.n && by_hash_.Find(s.hashes[hits]) >= 0) {
      Broken("memoised run misses a hit", m.run, hits);
    }
  }
}

}  // namespace servesim
