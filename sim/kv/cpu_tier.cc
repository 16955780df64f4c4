// KV offload tier in CPU memory (see cpu_tier.h).
#include "sim/kv/cpu_tier.h"

#include <algorithm>

#include "sim/kv/kv_invariant.h"

namespace servesim {
namespace {

constexpr size_t kFirstSize = 1024;

[[noreturn]] void Broken(const char* what, long long a, long long b) {
  KvInvariantBroken("CpuTier", what, a, b);
}

}  // namespace

CpuTier::CpuTier(int64_t capacity_blocks)
    : capacity_(capacity_blocks),
      log_(kFirstSize, 0),
      mask_(static_cast<int64_t>(kFirstSize) - 1),
      map_entries_(kFirstSize),
      places_(kFirstSize) {}

void CpuTier::Compact(size_t log_size, size_t map_entries) {
  std::vector<uint64_t> log(log_size, 0);
  BlockHashMap places(map_entries);
  size_t n = 0;
  for (int64_t s = oldest_; s < next_; ++s) {
    if (!Live(s)) continue;
    const uint64_t h = log_[static_cast<size_t>(SlotOf(s))];
    if (h != 0) places.Insert(h, static_cast<int32_t>(n));
    log[n++] = h;
  }
  log_.swap(log);
  places_ = std::move(places);
  map_entries_ = map_entries;
  mask_ = static_cast<int64_t>(log_size) - 1;
  oldest_ = 0;
  next_ = static_cast<int64_t>(n);
}

void CpuTier::Append(uint64_t hash) {
  if (next_ - oldest_ == static_cast<int64_t>(log_.size())) {
    // Full: with at least 3/4 of it dead, compacting in place frees room
    // for as many appends again; else it doubles. Either way a compaction's
    // cost is at most a few copies per append since the last.
    const size_t size = 4 * live_ <= static_cast<int64_t>(log_.size()) ? log_.size()
                                                                        : 2 * log_.size();
    Compact(size, map_entries_);
  }
  log_[static_cast<size_t>(SlotOf(next_++))] = hash;
}

void CpuTier::EvictOldest() {
  while (!Live(oldest_)) ++oldest_;
  const uint64_t h = log_[static_cast<size_t>(SlotOf(oldest_++))];
  if (h != 0) places_.Erase(h);
  --live_;
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
  if (hash != 0 && places_.Find(hash) >= 0) {
    Touch(hash);
    return false;  // held already: nothing to copy
  }
  if (swap_used_ >= capacity_) return false;
  if (used() >= capacity_) EvictOldest();
  if (hash != 0 && places_.size() == map_entries_) {
    Compact(log_.size(), 2 * map_entries_);  // the map is full: twice the room
  }
  Append(hash);
  if (hash != 0) places_.Insert(hash, SlotOf(next_ - 1));
  ++live_;
  return true;
}

void CpuTier::Touch(uint64_t hash) {
  if (hash == 0 || places_.Find(hash) < 0) Broken("touch of a block not held", 0, 0);
  // Its old place goes dead once the map points at the new one; appending
  // may compact the log, which keeps the old place live until then.
  Append(hash);
  places_.Assign(hash, SlotOf(next_ - 1));
}

void CpuTier::CheckInvariants() const {
  if (swap_used_ < 0 || used() > capacity_) Broken("over capacity", used(), capacity_);
  int64_t live = 0, hashed = 0;
  for (int64_t s = oldest_; s < next_; ++s) {
    if (!Live(s)) continue;
    ++live;
    hashed += log_[static_cast<size_t>(SlotOf(s))] != 0;
  }
  if (live != live_) Broken("live entries miscounted", live, live_);
  if (hashed != static_cast<int64_t>(places_.size())) {
    Broken("map and log disagree", hashed, static_cast<long long>(places_.size()));
  }
}

}  // namespace servesim
