// The fast engine's prefix cache: KvCache's semantics (vLLM automatic
// prefix caching; the reference engine keeps KvCache's one-block-at-a-time
// pool, and results are byte-identical: tests/fuzz/
// reference_equivalence_test.cc), with O(1) work per request rather than
// per block in the common cases:
//  - Only hashed blocks are named (an id, a reference count, a place in the
//    map). A block that holds no hash -- fresh, unregistered, or registered
//    privately (its request's own stream: only that request could ever hit
//    it, and only once preempted, when it is published) -- is anonymous:
//    its holder counts it (BlockList), and on the free queue it is part of
//    a count. An anonymous block takes a spare id when it is hashed
//    (Register, Publish); an evicted hashed block's id becomes spare.
//  - The free queue keeps KvCache's order. There uncached blocks always
//    lie ahead of every cached one (they are freed to the head, cached ones
//    to the tail), and which uncached block is reused can change nothing:
//    here they are one count, taken first. The cached ones are in
//    CachedQueue, where a request's privately registered blocks are one
//    run, freed (to the tail) and evicted (from the head) as a whole or in
//    part, logging 0 per block as KvCache does.
//  - Shared runs: the hits of a fixed chain of hashes (a shared prefix,
//    keyed by the caller) are memoised while nothing can change them --
//    none of their blocks was evicted and the first hash that missed did
//    not enter the map (either forgets that memo) -- as a run
//    object. Each holder takes one reference on the run; the run holds one
//    on each of its blocks while it has holders. A request then takes its
//    prefix hits, and gives them back, in O(1). The run's blocks lead each
//    holder's sequence, so when its last holder frees it they reach the
//    tail in the order KvCache's reverse walk gives them: parked there as
//    one entry (CachedQueue), so a run taken again before any of its blocks
//    is touched alone (a hit by id, an eviction, another run) leaves the
//    queue without a walk over the queue's links; a touch lays it out.
//
// Invariants (CheckInvariants): a block is named iff it holds a hash; a
// named block is on the cached queue (alone, or in the parked entry of the
// run parked_in_ names) iff nobody references it; the map
// is as in KvCache; spare ids are the unnamed ones; a memo that is still
// valid names exactly what a lookup would find.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/kv/block_hash_map.h"
#include "sim/kv/block_list.h"
#include "sim/kv/cached_queue.h"

namespace servesim {

class PrefixCache {
 public:
  explicit PrefixCache(int32_t num_blocks);

  int32_t num_blocks() const { return num_blocks_; }
  int32_t num_free() const { return uncached_ + queue_.blocks(); }
  int32_t num_used() const { return num_blocks_ - num_free(); }
  int32_t num_cached_free() const { return queue_.blocks(); }
  int64_t evictions() const { return evictions_; }

  // As KvCache::CountHits.
  int32_t CountHits(const uint64_t* hashes, int32_t n,
                    std::vector<int32_t>* found = nullptr) const;
  // The shared run of hashes[0..n) -- the chain `key` names, the same
  // every time it is asked with that key -- or -1 when its first block
  // misses. Its length (run_len) is CountHits(hashes, n).
  int32_t FindRun(uint64_t key, const uint64_t* hashes, int32_t n);
  // What FindRun(key, ..., n) would return when its memo is still current
  // (no hashes needed), else kNoRun.
  static constexpr int32_t kNoRun = -2;
  int32_t MemoisedRun(uint64_t key, int32_t n) const;
  int32_t run_len(int32_t run) const {
    return run < 0 ? 0 : static_cast<int32_t>(runs_[run].blocks.size());
  }
  // As KvCache::AcquireFound on an empty list: `run` (-1: none) or the
  // named hits, then `fresh` anonymous blocks.
  bool AcquireRun(int32_t run, int32_t fresh, int32_t reserve, BlockList* blocks);
  bool AcquireFound(const int32_t* hit_blocks, int32_t hits, int32_t fresh,
                    int32_t reserve, BlockList* blocks);
  // Registers block i of the list under `hash`: its first anonymous block
  // (registration goes in sequence order), which is named.
  void Register(BlockList* blocks, int32_t i, uint64_t hash);
  // Registers n blocks from block i privately (anonymous, cached).
  void RegisterPrivate(BlockList* blocks, int32_t i, int32_t n);
  // The list's privately registered blocks, from block i, join the map
  // under hashes[i..] (named).
  void Publish(BlockList* blocks, int32_t i, const uint64_t* hashes);
  void Release(const BlockList& blocks);

  void set_eviction_log(std::vector<uint64_t>* log) { eviction_log_ = log; }

  // For Scheduler::CheckInvariants: references on named blocks, run
  // objects and their holders.
  int32_t ref_count(int32_t block) const { return ref_[block]; }
  int32_t num_runs() const { return static_cast<int32_t>(runs_.size()); }
  int32_t run_holders(int32_t run) const { return runs_[run].holders; }
  const std::vector<int32_t>& run_blocks(int32_t run) const { return runs_[run].blocks; }
  void CheckInvariants() const;  // aborts with a description

 private:
  struct Run {
    std::vector<int32_t> blocks;
    std::vector<uint64_t> hashes;  // of blocks, and the first miss (checks)
    int32_t holders = 0;
    int32_t memo = -1;  // the memo it is current for; -1: none (freed when idle)
    // Parked on the queue (holders 0): its queue node and the blocks the
    // entry stands for, in queue order; -1 and empty when not parked.
    int32_t parked_node = -1;
    std::vector<int32_t> parked;
  };
  struct Memo {
    uint64_t key = 0;
    int32_t n = 0;
    int32_t run = -1;
    uint64_t miss = 0;  // the first hash that missed; 0: none did
    bool valid = false;
  };
  // Takes n free blocks (n <= num_free()): the uncached first, then evicts.
  void Take(int32_t n, BlockList* blocks);
  void Evict(int32_t block);  // a named block just taken off the queue
  void Name(int32_t block, uint64_t hash);  // into the map
  void ReleaseRun(int32_t run);
  void DropRun(int32_t run);  // its memo no longer names it
  void LayOut(int32_t run);   // its parked entry becomes its blocks, in place
  void Unqueue(int32_t block);  // a named free block leaves the queue
  void ForgetMiss(int32_t memo);  // out of misses_
  int32_t NewMemo(uint64_t key);  // its slot in memos_
  int32_t NewRun();

  int32_t num_blocks_;
  std::vector<int32_t> ref_;
  std::vector<uint64_t> hash_;    // 0: not named
  std::vector<int32_t> dup_next_;  // as KvCache's
  std::vector<int32_t> memo_of_;   // the memo whose run holds it, -1: none
  std::vector<int32_t> parked_in_;  // the run whose parked entry holds it, -1: none
  std::vector<int32_t> spare_;     // ids of no block
  BlockHashMap by_hash_;
  CachedQueue queue_;
  int32_t uncached_;  // free blocks holding nothing cached
  std::vector<Run> runs_;
  std::vector<int32_t> free_runs_;
  std::vector<Memo> memos_;
  size_t memo_capacity_ = 64;  // memo_index_'s, doubled when reached
  BlockHashMap memo_index_;     // key (never 0) -> memos_
  std::unordered_multimap<uint64_t, int32_t> misses_;  // Memo::miss -> memos_
  std::vector<int32_t> scratch_;
  int64_t evictions_ = 0;
  std::vector<uint64_t>* eviction_log_ = nullptr;
};

}  // namespace servesim
