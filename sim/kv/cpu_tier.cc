// KV offload tier in CPU memory (see cpu_tier.h).
#include "sim/kv/cpu_tier.h"

#include "sim/kv/kv_invariant.h"

namespace servesim {
namespace {

[[noreturn]] void Broken(const char* what, long long a, long long b) {
  KvInvariantBroken("CpuTier", what, a, b);
}

}  // namespace

void CpuTier::EvictOldest() {
  const uint64_t h = lru_.back();
  if (h != 0) by_hash_.erase(h);
  lru_.pop_back();
  ++evictions_;
}

bool CpuTier::ReserveSwap(int64_t n) {
  if (n > capacity_ - swap_used_) return false;
  while (used() + n > capacity_) EvictOldest();
  swap_used_ += n;
  return true;
}

void CpuTier::ReleaseSwap(int64_t n) {
  if (n < 0 || n > swap_used_) Broken("release of swap space not held", n, swap_used_);
  swap_used_ -= n;
}

bool CpuTier::Offer(uint64_t hash) {
  if (hash != 0) {
    const auto it = by_hash_.find(hash);
    if (it != by_hash_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return false;  // held already: nothing to copy
    }
  }
  if (swap_used_ >= capacity_) return false;
  if (used() >= capacity_) EvictOldest();
  lru_.push_front(hash);
  if (hash != 0) by_hash_.emplace(hash, lru_.begin());
  return true;
}

void CpuTier::Touch(uint64_t hash) {
  const auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) Broken("touch of a block not held", 0, 0);
  lru_.splice(lru_.begin(), lru_, it->second);
}

void CpuTier::CheckInvariants() const {
  if (swap_used_ < 0 || used() > capacity_) Broken("over capacity", used(), capacity_);
  int64_t hashed = 0;
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if (*it == 0) continue;
    ++hashed;
    const auto m = by_hash_.find(*it);
    if (m == by_hash_.end() || m->second != it) Broken("entry not in the map", 0, 0);
  }
  if (hashed != static_cast<int64_t>(by_hash_.size())) {
    Broken("map and list disagree", hashed, static_cast<long long>(by_hash_.size()));
  }
}

}  // namespace servesim
