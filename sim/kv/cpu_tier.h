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
// Invariants (CheckInvariants): swap_used() + num_prefix() <= capacity();
// every hashed entry is in the map exactly once, under its own hash.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

namespace servesim {

class CpuTier {
 public:
  explicit CpuTier(int64_t capacity_blocks) : capacity_(capacity_blocks) {}

  int64_t capacity() const { return capacity_; }
  int64_t swap_used() const { return swap_used_; }
  int64_t num_prefix() const { return static_cast<int64_t>(lru_.size()); }
  int64_t used() const { return swap_used_ + num_prefix(); }
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
  bool Contains(uint64_t hash) const { return hash != 0 && by_hash_.count(hash) != 0; }
  // Marks a hit entry most recently used (it stays: the tier is a copy).
  void Touch(uint64_t hash);

  void CheckInvariants() const;  // aborts with a description

 private:
  void EvictOldest();

  int64_t capacity_;
  int64_t swap_used_ = 0;
  int64_t evictions_ = 0;
  std::list<uint64_t> lru_;  // front: most recently used
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> by_hash_;
};

}  // namespace servesim
