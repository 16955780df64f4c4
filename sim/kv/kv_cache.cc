// KV cache with lazy-evicting prefix cache (see kv_cache.h).
#include "sim/kv/kv_cache.h"

#include <cstdio>
#include <cstdlib>

namespace servesim {
namespace {

[[noreturn]] void Broken(const char* what, long long a, long long b) {
  std::fprintf(stderr, "servesim: KvCache invariant broken: %s (%lld, %lld)\n",
               what, a, b);
  std::abort();
}

}  // namespace

KvCache::KvCache(int32_t num_blocks, bool prefix_caching)
    : pool_(num_blocks),
      prefix_caching_(prefix_caching),
      by_hash_(prefix_caching ? static_cast<size_t>(num_blocks) : 0) {
  if (prefix_caching_) hash_.assign(num_blocks, 0);
}

int32_t KvCache::CountHits(const uint64_t* hashes, int32_t n) const {
  if (!prefix_caching_) return 0;
  int32_t hits = 0;
  while (hits < n && by_hash_.Find(hashes[hits]) >= 0) ++hits;
  return hits;
}

bool KvCache::Acquire(const uint64_t* hashes, int32_t hits, int32_t fresh,
                      std::vector<int32_t>* blocks) {
  int32_t hits_on_free_queue = 0;
  for (int32_t i = 0; i < hits; ++i) {
    if (pool_.ref_count(by_hash_.Find(hashes[i])) == 0) ++hits_on_free_queue;
  }
  if (fresh > pool_.num_free() - hits_on_free_queue) return false;
  for (int32_t i = 0; i < hits; ++i) {
    const int32_t b = by_hash_.Find(hashes[i]);
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

void KvCache::Evict(int32_t b) {
  by_hash_.Erase(hash_[b]);
  hash_[b] = 0;
  --num_cached_free_;
  ++evictions_;
}

void KvCache::Register(int32_t block, uint64_t hash) {
  if (!prefix_caching_ || hash_[block] != 0) return;
  if (pool_.ref_count(block) <= 0) Broken("register of a free block", block, 0);
  if (by_hash_.Insert(hash, block)) hash_[block] = hash;
}

void KvCache::Release(const std::vector<int32_t>& blocks) {
  pool_.Release(blocks);
  if (!prefix_caching_) return;
  for (int32_t b : blocks) {
    if (hash_[b] != 0 && pool_.ref_count(b) == 0) ++num_cached_free_;
  }
}

void KvCache::CheckInvariants() const {
  pool_.CheckInvariants();
  if (!prefix_caching_) return;
  int32_t cached_free = 0, registered = 0;
  for (int32_t b = 0; b < pool_.num_blocks(); ++b) {
    if (hash_[b] == 0) continue;
    ++registered;
    if (by_hash_.Find(hash_[b]) != b) Broken("block hash not mapped to it", b, 0);
    if (pool_.ref_count(b) == 0) ++cached_free;
  }
  if (registered != static_cast<int32_t>(by_hash_.size())) {
    Broken("map and blocks disagree", registered, static_cast<long long>(by_hash_.size()));
  }
  if (cached_free != num_cached_free_) Broken("cached-free count", cached_free, num_cached_free_);
  if (num_cached_free_ > pool_.num_free()) Broken("more cached than free", num_cached_free_, pool_.num_free());
}

}  // namespace servesim
