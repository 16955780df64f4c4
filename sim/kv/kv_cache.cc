// KV cache with lazy-evicting prefix cache (see kv_cache.h).
#include "sim/kv/kv_cache.h"

#include <algorithm>

#include "sim/kv/kv_invariant.h"

namespace servesim {
namespace {

[[noreturn]] void Broken(const char* what, long long a, long long b) {
  KvInvariantBroken("KvCache", what, a, b);
}

}  // namespace

KvCache::KvCache(int32_t num_blocks, bool prefix_caching, bool counted_pool,
                 bool fast_prefix)
    : pool_(prefix_caching && fast_prefix ? 0 : num_blocks,
            /*counted=*/counted_pool && !prefix_caching),
      prefix_caching_(prefix_caching),
      by_hash_(prefix_caching && !fast_prefix ? static_cast<size_t>(num_blocks) : 0) {
  if (prefix_caching_ && fast_prefix) {
    fast_ = std::make_unique<PrefixCache>(num_blocks);
  } else if (prefix_caching_) {
    hash_.assign(num_blocks, 0);
    private_.assign(num_blocks, 0);
    dup_next_.assign(num_blocks, -1);
  }
}

KvCache::~KvCache() = default;

void KvCache::set_eviction_log(std::vector<uint64_t>* log) {
  eviction_log_ = log;
  if (fast_) fast_->set_eviction_log(log);
}

int32_t KvCache::CountHits(const uint64_t* hashes, int32_t n,
                           std::vector<int32_t>* found) const {
  if (fast_) return fast_->CountHits(hashes, n, found);
  if (found != nullptr) found->clear();
  if (!prefix_caching_) return 0;
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

bool KvCache::Acquire(const uint64_t* hashes, int32_t hits, int32_t fresh,
                      int32_t reserve, std::vector<int32_t>* blocks) {
  if (hits == 0) return AcquireFound(nullptr, 0, fresh, reserve, blocks);
  std::vector<int32_t> found;
  for (int32_t i = 0; i < hits; ++i) found.push_back(by_hash_.Find(hashes[i]));
  return AcquireFound(found.data(), hits, fresh, reserve, blocks);
}

bool KvCache::AcquireFound(const int32_t* hit_blocks, int32_t hits,
                           int32_t fresh, int32_t reserve,
                           std::vector<int32_t>* blocks) {
  int32_t hits_on_free_queue = 0;
  for (int32_t i = 0; i < hits; ++i) {
    if (pool_.ref_count(hit_blocks[i]) == 0) ++hits_on_free_queue;
  }
  if (std::max(fresh, reserve) > pool_.num_free() - hits_on_free_queue) return false;
  for (int32_t i = 0; i < hits; ++i) {
    const int32_t b = hit_blocks[i];
    if (pool_.ref_count(b) == 0) --num_cached_free_;
    pool_.AddRef(b);
    blocks->push_back(b);
  }
  const size_t first_fresh = blocks->size();
  pool_.Allocate(fresh, blocks);
  if (prefix_caching_) {
    for (size_t i = first_fresh; i < blocks->size(); ++i) {
      if (hash_[(*blocks)[i]] != 0) Evict((*blocks)[i]);
    }
  }
  return true;
}

bool KvCache::AcquireFound(const int32_t* hit_blocks, int32_t hits,
                           int32_t fresh, int32_t reserve, BlockList* blocks) {
  if (fast_) return fast_->AcquireFound(hit_blocks, hits, fresh, reserve, blocks);
  if (!pool_.counted()) {
    if (blocks->counted() != 0) Broken("counted blocks in an id pool's list", blocks->counted(), 0);
    return AcquireFound(hit_blocks, hits, fresh, reserve, &blocks->ids());
  }
  if (hits != 0) Broken("prefix hits in a counted pool", hits, 0);
  if (std::max(fresh, reserve) > pool_.num_free()) return false;
  return pool_.Allocate(fresh, blocks);
}

void KvCache::Evict(int32_t b) {
  if (eviction_log_ != nullptr) eviction_log_->push_back(private_[b] ? 0 : hash_[b]);
  if (private_[b]) {
    private_[b] = 0;
    hash_[b] = 0;
    --num_cached_free_;
    ++evictions_;
    return;
  }
  const uint64_t h = hash_[b];
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
  dup_next_[b] = -1;
  hash_[b] = 0;
  --num_cached_free_;
  ++evictions_;
}

void KvCache::Register(int32_t block, uint64_t hash) {
  if (!prefix_caching_ || hash_[block] != 0) return;
  if (pool_.ref_count(block) <= 0) Broken("register of a free block", block, 0);
  if (!by_hash_.Insert(hash, block)) {
    int32_t last = by_hash_.Find(hash);
    while (dup_next_[last] >= 0) last = dup_next_[last];
    dup_next_[last] = block;
  }
  hash_[block] = hash;
  dup_next_[block] = -1;
}

void KvCache::RegisterPrivate(int32_t block) {
  if (!prefix_caching_ || hash_[block] != 0) return;
  if (pool_.ref_count(block) <= 0) Broken("register of a free block", block, 0);
  hash_[block] = 1;  // any non-zero value: "registered"
  private_[block] = 1;
}

void KvCache::Publish(int32_t block, uint64_t hash) {
  if (!prefix_caching_ || !private_[block]) return;
  private_[block] = 0;
  hash_[block] = 0;
  Register(block, hash);
}

void KvCache::Release(const std::vector<int32_t>& blocks) {
  pool_.Release(blocks, prefix_caching_ ? hash_.data() : nullptr);
  if (!prefix_caching_) return;
  for (int32_t b : blocks) {
    if (hash_[b] != 0 && pool_.ref_count(b) == 0) ++num_cached_free_;
  }
}

void KvCache::Register(BlockList* blocks, int32_t i, uint64_t hash) {
  if (fast_) {
    fast_->Register(blocks, i, hash);
  } else {
    Register((*blocks)[static_cast<size_t>(i)], hash);
  }
}

void KvCache::RegisterPrivate(BlockList* blocks, int32_t i, int32_t n) {
  if (fast_) {
    fast_->RegisterPrivate(blocks, i, n);
    return;
  }
  for (int32_t k = i; k < i + n; ++k) RegisterPrivate((*blocks)[static_cast<size_t>(k)]);
}

void KvCache::Publish(BlockList* blocks, int32_t i, int32_t end, const uint64_t* hashes) {
  if (fast_) {
    fast_->Publish(blocks, i, hashes);
    return;
  }
  for (int32_t k = i; k < end; ++k) Publish((*blocks)[static_cast<size_t>(k)], hashes[k]);
}

void KvCache::Release(const BlockList& blocks) {
  if (fast_) {
    fast_->Release(blocks);
  } else if (pool_.counted()) {
    pool_.Release(blocks);
  } else {
    if (blocks.counted() != 0) Broken("counted blocks in an id pool's list", blocks.counted(), 0);
    Release(blocks.ids());
  }
}

void KvCache::CheckInvariants() const {
  if (fast_) {
    fast_->CheckInvariants();
    return;
  }
  pool_.CheckInvariants();
  if (!prefix_caching_) return;
  int32_t cached_free = 0, registered = 0, chained = 0, heads = 0;
  for (int32_t b = 0; b < pool_.num_blocks(); ++b) {
    if (hash_[b] == 0) {
      if (private_[b]) Broken("unregistered block marked private", b, 0);
      if (dup_next_[b] != -1) Broken("unregistered block in a chain", b, dup_next_[b]);
      continue;
    }
    if (private_[b]) {
      if (pool_.ref_count(b) == 0) ++cached_free;
      continue;
    }
    ++registered;
    int32_t p = by_hash_.Find(hash_[b]);
    if (p < 0) Broken("registered block's hash not in the map", b, 0);
    if (p == b) {
      ++heads;
      for (int32_t q = b; q >= 0; q = dup_next_[q]) {
        if (hash_[q] != hash_[b]) Broken("chain mixes hashes", b, q);
        if (++chained > pool_.num_blocks()) Broken("chain has a cycle", b, q);
      }
    } else {
      while (p >= 0 && p != b) p = dup_next_[p];
      if (p != b) Broken("block not reachable under its hash", b, 0);
    }
    if (pool_.ref_count(b) == 0) ++cached_free;
  }
  if (registered != chained || heads != static_cast<int32_t>(by_hash_.size())) {
    Broken("map and blocks disagree", registered, static_cast<long long>(by_hash_.size()));
  }
  if (cached_free != num_cached_free_) Broken("cached-free count", cached_free, num_cached_free_);
  if (num_cached_free_ > pool_.num_free()) Broken("more cached than free", num_cached_free_, pool_.num_free());
}

}  // namespace servesim
