// KV offload tier in CPU memory (engine.kv_offload): a second cache tier
// behind the GPU's paged KV cache, counted in blocks of the GPU's size.
//
// Two kinds of contents share its capacity:
//  - swap space: the blocks of requests preempted by swapping
//    (engine.preemption "swap"), held until the request resumes; never
//    evicted, counted per request by the scheduler;
//  - prefix blocks: full blocks evicted from the GPU prefix cache, keyed by
//    their chained hash, evicted least recently used first. A block its own
//    request alone could ever hit (the scheduler's private stream) is kept
//    as an anonymous entry: it takes room and ages like the others but no
//    lookup finds it (the reference engine, which hashes every block, holds
//    the same entries under hashes nobody looks up).
// Swap space takes priority: reserving it evicts prefix blocks.
//
// Recency is a log, not a linked list (a block is offered, refreshed or hit
// a few hundred times per request on a RAG workload): entries are appended
// in the order they were last used, a refreshed entry is appended again and
// its old place goes dead (the map points at its newest place), eviction
// takes the oldest live place, and the log is compacted when it fills. No
// allocation per block, and the same order as a move-to-front list.
//
// Invariants (CheckInvariants): swap_used() + num_prefix() <= capacity();
// every hashed entry is in the map exactly once, at its newest place.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/kv/block_hash_map.h"

namespace servesim {

class CpuTier {
 public:
  explicit CpuTier(int64_t capacity_blocks);

  int64_t capacity() const { return capacity_; }
  int64_t swap_used() const { return swap_used_; }
  int64_t num_prefix() const { return live_; }
  int64_t used() const { return swap_used_ + live_; }
  int64_t evictions() const { return evictions_; }  // prefix blocks dropped

  // Takes n blocks of swap space, evicting prefix blocks as needed; false
  // (nothing changed) when even an empty prefix part leaves too little.
  bool ReserveSwap(int64_t n);
  void ReleaseSwap(int64_t n);

  // A block evicted from the GPU prefix cache is stored (hash 0: an
  // anonymous entry), or refreshed if its hash is here already; the least
  // recently used entry makes room. True if the block was copied: false
  // when it was here already, or when swap space fills the tier (dropped).
  bool Offer(uint64_t hash);
  bool Contains(uint64_t hash) const { return hash != 0 && places_.Find(hash) >= 0; }
  // Marks a hit entry most recently used (it stays: the tier is a copy).
  void Touch(uint64_t hash);

  void CheckInvariants() const;  // aborts with a description

 private:
  // Log positions are sequence numbers; a position's slot is seq & mask_.
  int32_t SlotOf(int64_t seq) const { return static_cast<int32_t>(seq & mask_); }
  // The entry at `seq` is the newest place of its block.
  bool Live(int64_t seq) const {
    const uint64_t h = log_[static_cast<size_t>(SlotOf(seq))];
    return h == 0 || places_.Find(h) == SlotOf(seq);
  }
  void Append(uint64_t hash);  // at the newest end; the map is the caller's
  void EvictOldest();
  // Drops the dead places and rebuilds the map, into a log of `log_size`
  // slots and a map for `map_entries` hashed entries.
  void Compact(size_t log_size, size_t map_entries);

  int64_t capacity_;
  int64_t swap_used_ = 0;
  int64_t evictions_ = 0;
  int64_t live_ = 0;  // prefix entries (hashed and anonymous)
  std::vector<uint64_t> log_;  // 0: anonymous
  int64_t mask_ = 0;
  int64_t oldest_ = 0, next_ = 0;  // the log holds [oldest_, next_)
  size_t map_entries_ = 0;         // what places_ was sized for
  BlockHashMap places_;            // hash -> its newest slot
};

}  // namespace servesim
