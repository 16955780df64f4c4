// The request-level KV cache manager, between the scheduler and the block
// pool (as vLLM v1 separates its KVCacheManager from the BlockPool): which
// blocks a request holds, what the prefix cache serves it, when its full
// blocks become cacheable, and the CPU tier (swap preemption, prefix hits
// loaded from CPU memory, the GPU cache's evictions spilled there). The
// scheduler decides who runs and with how many tokens; this decides the
// blocks. Every rule here was the scheduler's and is byte-identical to it
// (tests/fuzz/reference_equivalence_test.cc, tests/conformance).
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/block_hashing.h"
#include "sim/engine/block_math.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/scheduler_policy.h"
#include "sim/engine/transfer_counts.h"
#include "sim/kv/cpu_tier.h"
#include "sim/kv/kv_cache.h"
#include "sim/kv/prefix_cache.h"

namespace servesim {

// What admitting a waiting request would find.
struct KvLookup {
  int32_t hits = 0;      // GPU prefix-cache blocks
  int32_t cpu_hits = 0;  // the CPU tier's blocks continuing them
  int32_t run = PrefixCache::kNoRun;  // a memoised shared run, or none
  int32_t cached = 0;    // tokens served: hits, CPU hits or its swapped copy
  int32_t swap_in = 0;   // blocks of its swapped copy brought back
};

class KvManager {
 public:
  // `num_blocks`: the usable blocks (vLLM's null block left out).
  KvManager(const EngineConfig& config, int32_t num_blocks);

  KvCache& cache() { return kv_; }
  const KvCache& cache() const { return kv_; }
  bool prefix_caching() const { return kv_.prefix_caching(); }
  const CpuTier* cpu_tier() const { return cpu_.get(); }
  int64_t swap_preemptions() const { return swap_preemptions_; }
  int64_t swap_fallbacks() const { return swap_fallbacks_; }
  // Evictions logged but not yet offered to the CPU tier (none between
  // steps).
  size_t pending_spills() const { return evicted_.size(); }

  // Admission of a waiting request: its prefix lookup (at least its last
  // known token is computed), then, if the scheduler takes it, its blocks
  // (the hits and `fresh` new ones, `reserve` free blocks required; false:
  // nothing changed) and the CPU tier's part.
  KvLookup Find(Request& r);
  bool Allocate(Request& r, const KvLookup& l, int32_t fresh, int32_t reserve);
  void Loaded(Request& r, const KvLookup& l, TransferCounts* t) {
    if (cpu_ != nullptr) LoadedWithCpuTier(r, l, t);  // (nothing without one)
  }
  // Grows r's block list to cover `tokens` cached tokens; false if the
  // pool is short.
  bool EnsureBlocks(Request& r, int32_t tokens, TransferCounts* t);
  // Registers r's full blocks covering its first `tokens` tokens.
  void RegisterFullBlocks(Request& r, int32_t tokens);
  // A preempted request: its private blocks published (it may resume from
  // them), its KV swapped out if swap preemption has room, its blocks
  // freed.
  void Preempt(Request& r, TransferCounts* t);
  // A finished request's swapped copy (no longer needed), and its blocks.
  void DropSwap(Request& r);
  void Free(Request& r);
  // What the prefix cache would serve a waiting request now.
  PrefixMatch Probe(Request& r);

 private:
  void LoadedWithCpuTier(Request& r, const KvLookup& l, TransferCounts* t);
  // When r's lookup is its shared prefix's chain of hashes, the run
  // PrefixCache memoises for it (-1: no hits); else PrefixCache::kNoRun.
  int32_t SharedRun(const Request& r, int32_t lookup);
  // FirstPrivateBlock, or none with EngineConfig::reference_engine.
  int32_t FirstPrivate(const Request& r) const {
    return reference_ ? INT32_MAX : FirstPrivateBlock(r, block_size_);
  }
  // The lookup's length in blocks.
  int32_t LookupBlocks(const Request& r) const;
  void PublishPrivateBlocks(Request& r);
  void SwapOut(Request& r, TransferCounts* t);
  void SpillEvicted(TransferCounts* t);

  int32_t block_size_;
  bool reference_, swap_preemption_;
  BlockMath blocks_;
  KvCache kv_;
  std::vector<int32_t> hit_blocks_;  // scratch: Find's prefix-cache hits
  PrefixHashMemo prefix_hashes_;
  PrefixHashMemo* hash_memo_ = nullptr;  // &prefix_hashes_ unless reference
  std::unique_ptr<CpuTier> cpu_;         // engine.kv_offload, else null
  std::vector<uint64_t> evicted_;        // the GPU cache's eviction log
  int64_t swap_preemptions_ = 0, swap_fallbacks_ = 0;
};

}  // namespace servesim
