// KV cache of one replica: the block pool plus, when enabled, the prefix
// cache (vLLM automatic prefix caching semantics).
//
// A full block may be registered under the chained hash of its content
// (parent block's hash + this block's content); partial blocks never are.
// As in vLLM, identical blocks are not de-duplicated: two requests that
// compute the same prefix at once both register their blocks under the same
// hash, and a lookup returns the one registered first (block tables stay
// append-only). A registered block that no running request holds stays
// cached on the free queue and is evicted lazily — only when a fresh block
// is needed, least recently freed first (at equal recency the tail of a
// chain first, because BlockPool::Release frees a sequence's blocks in
// reverse); blocks holding nothing cached are reused before any of them.
//
// A block that only its own request could ever hit (its private stream) is
// registered privately: cached, freed to the tail and evicted exactly as a
// hashed one, but kept out of the map — no hash, insert or erase — unless
// its request is preempted and may resume from it (Publish).
//
// The fast engine's prefix caching runs on PrefixCache instead (same
// results, O(1) per request where this pays per block): KvCache then only
// forwards the list forms below. The reference engine keeps this one, and
// so do the id forms (for it and the unit tests).
//
// Invariants (CheckInvariants): every registered block but the private ones
// is reachable from the map under its own hash and nowhere else; cached-free + plain-free +
// in-use = total; no block is freed while referenced (BlockPool aborts).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/kv/block_hash_map.h"
#include "sim/kv/block_pool.h"
#include "sim/kv/prefix_cache.h"

namespace servesim {

class KvCache {
 public:
  // counted_pool: without prefix caching, a counted pool (BlockPool):
  // blocks are handed out and taken back by count, not by id. With prefix
  // caching it selects PrefixCache (the list forms only).
  KvCache(int32_t num_blocks, bool prefix_caching, bool counted_pool = true,
          bool fast_prefix = false);
  ~KvCache();

  bool prefix_caching() const { return prefix_caching_; }
  // PrefixCache, or null.
  PrefixCache* fast() { return fast_.get(); }
  const PrefixCache* fast() const { return fast_.get(); }
  // Every block a holder has is listed by id (the reference engine).
  bool names_blocks() const { return !pool_.counted() && fast_ == nullptr; }
  // (An empty id pool when fast().)
  const BlockPool& pool() const { return pool_; }
  // Inline: the counted pool's step loop asks these every step.
  int32_t num_blocks() const { return fast_ ? fast_->num_blocks() : pool_.num_blocks(); }
  int32_t num_used() const { return fast_ ? fast_->num_used() : pool_.num_used(); }
  int32_t num_free() const {  // incl. cached-free
    return fast_ ? fast_->num_free() : pool_.num_free();
  }
  int32_t num_cached_free() const {
    return fast_ ? fast_->num_cached_free() : num_cached_free_;
  }
  int64_t evictions() const { return fast_ ? fast_->evictions() : evictions_; }

  // How many of hashes[0..n) are cached, as a leading run. Changes nothing.
  // With `found`, also replaces its contents with the hit blocks.
  int32_t CountHits(const uint64_t* hashes, int32_t n,
                    std::vector<int32_t>* found = nullptr) const;
  // As Acquire below, with the hit blocks already looked up (CountHits).
  bool AcquireFound(const int32_t* hit_blocks, int32_t hits, int32_t fresh,
                    int32_t reserve, std::vector<int32_t>* blocks);
  // Appends the `hits` cached blocks of hashes[0..hits) (taking a reference
  // on each) and `fresh` new blocks to *blocks. All or nothing: false and no
  // change when the free queue cannot supply `reserve` (>= fresh) blocks once
  // the hit blocks are taken out of it.
  bool Acquire(const uint64_t* hashes, int32_t hits, int32_t fresh,
               int32_t reserve, std::vector<int32_t>* blocks);
  bool Acquire(const uint64_t* hashes, int32_t hits, int32_t fresh,
               std::vector<int32_t>* blocks) {
    return Acquire(hashes, hits, fresh, fresh, blocks);
  }
  // The same for a holder's BlockList, from either pool (a counted pool:
  // no hits, no hashes).
  bool AcquireFound(const int32_t* hit_blocks, int32_t hits, int32_t fresh,
                    int32_t reserve, BlockList* blocks);
  bool Acquire(int32_t fresh, int32_t reserve, BlockList* blocks) {
    return AcquireFound(nullptr, 0, fresh, reserve, blocks);
  }
  // Registers a full, held block under `hash` (after any other block that
  // already holds it); a block already registered keeps its hash.
  void Register(int32_t block, uint64_t hash);
  // Registers a full, held block of a private stream (see above).
  void RegisterPrivate(int32_t block);
  // A privately registered block joins the map under `hash`; others are
  // left as they are.
  void Publish(int32_t block, uint64_t hash);
  bool registered(int32_t block) const {
    return prefix_caching_ && hash_[block] != 0;
  }
  void Release(const std::vector<int32_t>& blocks);
  void Release(const BlockList& blocks);

  // The list forms of the three registrations, for either cache: block i
  // of the list (Register), n blocks from block i (RegisterPrivate), the
  // privately registered blocks in [i, end) under hashes[i..end)
  // (Publish).
  void Register(BlockList* blocks, int32_t i, uint64_t hash);
  void RegisterPrivate(BlockList* blocks, int32_t i, int32_t n);
  void Publish(BlockList* blocks, int32_t i, int32_t end, const uint64_t* hashes);

  // Every block evicted from now on appends its hash to *log (0 for a
  // privately registered block), in eviction order (the CPU offload tier
  // takes them; null: none kept).
  void set_eviction_log(std::vector<uint64_t>* log);

  void CheckInvariants() const;  // aborts with a description

 private:
  void Evict(int32_t block);

  BlockPool pool_;
  bool prefix_caching_;
  BlockHashMap by_hash_;
  std::vector<uint64_t> hash_;  // 0: not registered
  std::vector<uint8_t> private_;  // registered privately: not in the map
  // Blocks sharing a hash, in registration order: the map names the first,
  // dup_next_ the one after (-1: none).
  std::vector<int32_t> dup_next_;
  int32_t num_cached_free_ = 0;
  int64_t evictions_ = 0;
  std::vector<uint64_t>* eviction_log_ = nullptr;
  std::unique_ptr<PrefixCache> fast_;
};

}  // namespace servesim
