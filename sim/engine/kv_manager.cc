// The request-level KV cache manager (see kv_manager.h).
#include "sim/engine/kv_manager.h"

#include <algorithm>

namespace servesim {

KvManager::KvManager(const EngineConfig& config, int32_t num_blocks)
    : block_size_(config.block_size),
      reference_(config.reference_engine),
      swap_preemption_(config.swap_preemption),
      blocks_(config.block_size),
      kv_(num_blocks, config.prefix_caching, /*counted_pool=*/!config.reference_engine,
          /*fast_prefix=*/!config.reference_engine) {
  if (!config.reference_engine) hash_memo_ = &prefix_hashes_;
  if (config.cpu_blocks > 0) {
    cpu_ = std::make_unique<CpuTier>(config.cpu_blocks);
    if (config.prefix_caching) kv_.set_eviction_log(&evicted_);
  }
}

void KvManager::SpillEvicted(TransferCounts* t) {
  for (uint64_t h : evicted_) t->store += cpu_->Offer(h) ? 1 : 0;
  evicted_.clear();
}

void KvManager::SwapOut(Request& r, TransferCounts* t) {
  const int32_t n = blocks_.Blocks(r.num_computed);
  if (n > 0 && cpu_->ReserveSwap(n)) {
    r.swapped_tokens = r.num_computed;
    r.swap_blocks = n;
    t->swap_out += n;
    ++swap_preemptions_;
  } else {
    ++swap_fallbacks_;  // no room: recompute
  }
}

int32_t KvManager::SharedRun(const Request& r, int32_t lookup) {
  // Its lookup's hashes are those of its prefix alone (as EnsureBlockHashes
  // would give them), the same for every request with that prefix; with
  // the CPU tier the lookup goes on in r's own hashes.
  const PromptContent& c = r.content;
  if (kv_.fast() == nullptr || hash_memo_ == nullptr || cpu_ != nullptr ||
      r.preemptions != 0 || c.trace_hashes || lookup <= 0 ||
      lookup > c.prefix_len / block_size_) {
    return PrefixCache::kNoRun;
  }
  // A memo still current needs no hashes.
  const int32_t run = kv_.fast()->MemoisedRun(c.prefix_id, lookup);
  if (run != PrefixCache::kNoRun) return run;
  const std::vector<uint64_t>* chain = hash_memo_->Chain(c.prefix_id, lookup);
  return chain == nullptr ? PrefixCache::kNoRun
                          : kv_.fast()->FindRun(c.prefix_id, chain->data(), lookup);
}

int32_t KvManager::LookupBlocks(const Request& r) const {
  // At least the last known token is computed to produce logits; before
  // any preemption its own stream's blocks are in no cache.
  int32_t lookup = (r.known_tokens() - 1) / block_size_;
  if (r.preemptions == 0) lookup = std::min(lookup, FirstPrivate(r));
  return lookup;
}

KvLookup KvManager::Find(Request& r) {
  KvLookup l;
  if (kv_.prefix_caching()) {
    const int32_t lookup = LookupBlocks(r);
    l.run = SharedRun(r, lookup);
    if (l.run != PrefixCache::kNoRun) {
      l.hits = kv_.fast()->run_len(l.run);
    } else {
      EnsureBlockHashes(&r, lookup, block_size_, hash_memo_);
      l.hits = kv_.CountHits(r.block_hashes.data(), lookup, &hit_blocks_);
    }
    // The CPU tier continues the run the GPU cache started (a swapped
    // request's own copy serves it instead).
    if (cpu_ != nullptr && r.swap_blocks == 0) {
      while (l.hits + l.cpu_hits < lookup &&
             cpu_->Contains(r.block_hashes[l.hits + l.cpu_hits])) {
        ++l.cpu_hits;
      }
    }
  }
  l.cached = (l.hits + l.cpu_hits) * block_size_;
  // Swapped out: its KV comes back from the CPU tier, beyond what the GPU
  // cache still holds; at least its last known token is computed.
  if (r.swap_blocks > 0) {
    const int32_t resume = std::min(r.swapped_tokens, r.known_tokens() - 1);
    if (resume > l.cached) {
      l.swap_in = blocks_.Blocks(resume) - l.hits;
      l.cached = resume;
    }
  }
  return l;
}

bool KvManager::Allocate(Request& r, const KvLookup& l, int32_t fresh, int32_t reserve) {
  // Its whole block list at once: one allocation per request, not one per
  // doubling (capacity only; the blocks are what they were). A counted
  // pool's list holds no ids.
  if (kv_.names_blocks() && r.blocks.capacity() == 0) {
    r.blocks.reserve(static_cast<size_t>(blocks_.Blocks(r.max_cached_tokens())));
  }
  const bool ok = l.run != PrefixCache::kNoRun
                      ? kv_.fast()->AcquireRun(l.run, fresh, reserve, &r.blocks)
                      : kv_.AcquireFound(hit_blocks_.data(), l.hits, fresh, reserve,
                                         &r.blocks);
  if (ok) r.num_registered = l.hits;
  return ok;
}

void KvManager::LoadedWithCpuTier(Request& r, const KvLookup& l, TransferCounts* t) {
  // Loaded before the blocks the acquire evicted are offered to the tier.
  for (int32_t i = l.hits; i < l.hits + l.cpu_hits; ++i) cpu_->Touch(r.block_hashes[i]);
  t->load += l.cpu_hits;
  if (r.swap_blocks > 0) {
    cpu_->ReleaseSwap(r.swap_blocks);
    t->swap_in += l.swap_in;
    r.swap_blocks = 0;
    r.swapped_tokens = 0;
  }
  if (!evicted_.empty()) SpillEvicted(t);
}

bool KvManager::EnsureBlocks(Request& r, int32_t tokens, TransferCounts* t) {
  const int32_t need = blocks_.Blocks(tokens) - r.blocks.size();
  if (need <= 0) return true;
  const bool ok = kv_.Acquire(need, need, &r.blocks);
  if (!evicted_.empty()) SpillEvicted(t);
  return ok;
}

void KvManager::RegisterFullBlocks(Request& r, int32_t tokens) {
  const int32_t full = blocks_.Full(tokens);
  if (full <= r.num_registered) return;
  // Blocks of its own stream are hashed only once it is preempted (Preempt
  // publishes those it holds): until then no request can hit them.
  const int32_t shared =
      r.preemptions == 0 ? std::min(full, FirstPrivate(r)) : full;
  if (r.num_registered < shared) {
    EnsureBlockHashes(&r, shared, block_size_, hash_memo_);
    for (int32_t i = r.num_registered; i < shared; ++i) {
      kv_.Register(&r.blocks, i, r.block_hashes[i]);
    }
  }
  const int32_t first_private = std::max(r.num_registered, shared);
  if (full > first_private) kv_.RegisterPrivate(&r.blocks, first_private, full - first_private);
  r.num_registered = full;
}

void KvManager::PublishPrivateBlocks(Request& r) {
  const int32_t first = FirstPrivate(r);
  if (first >= r.num_registered) return;
  EnsureBlockHashes(&r, r.num_registered, block_size_, hash_memo_);
  kv_.Publish(&r.blocks, first, r.num_registered, r.block_hashes.data());
}

void KvManager::Preempt(Request& r, TransferCounts* t) {
  // It may resume from its own blocks: from now on they are hashed.
  if (kv_.prefix_caching() && r.preemptions == 0) PublishPrivateBlocks(r);
  if (swap_preemption_) SwapOut(r, t);
  kv_.Release(r.blocks);
  r.blocks.clear();
  r.num_registered = 0;
}

void KvManager::DropSwap(Request& r) {
  if (r.swap_blocks == 0) return;
  cpu_->ReleaseSwap(r.swap_blocks);
  r.swap_blocks = 0;
  r.swapped_tokens = 0;
}

void KvManager::Free(Request& r) {
  kv_.Release(r.blocks);
  r.blocks.Free();
}

PrefixMatch KvManager::Probe(Request& r) {
  PrefixMatch m;
  if (!kv_.prefix_caching()) return m;
  // The lookup Find makes.
  const int32_t lookup = LookupBlocks(r);
  EnsureBlockHashes(&r, lookup, block_size_, hash_memo_);
  m.cached_tokens = kv_.CountHits(r.block_hashes.data(), lookup) * block_size_;
  m.hashes = r.block_hashes.data();
  m.num_hashes = lookup;
  return m;
}

}  // namespace servesim
