// The CPU offload tier: swap space before prefix blocks, LRU order, hits
// that stay, anonymous entries; and its recency log against a plain
// move-to-front list over long random runs (compactions and growth).
#include "sim/kv/cpu_tier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>

namespace servesim {
namespace {

TEST(CpuTier, PrefixBlocksAreEvictedLeastRecentlyUsedFirst) {
  CpuTier t(3);
  EXPECT_TRUE(t.Offer(11));
  EXPECT_TRUE(t.Offer(12));
  EXPECT_TRUE(t.Offer(13));
  t.Touch(11);                 // order (newest first): 11, 13, 12
  EXPECT_FALSE(t.Offer(13));   // held already: refreshed, nothing copied
  EXPECT_TRUE(t.Offer(14));    // evicts 12
  EXPECT_FALSE(t.Contains(12));
  EXPECT_TRUE(t.Contains(11));
  EXPECT_TRUE(t.Contains(13));
  EXPECT_TRUE(t.Contains(14));
  EXPECT_EQ(t.evictions(), 1);
  t.CheckInvariants();
}

TEST(CpuTier, SwapSpaceEvictsPrefixBlocksAndIsNeverEvicted) {
  CpuTier t(4);
  t.Offer(1);
  t.Offer(0);  // anonymous: takes room, found by no lookup
  t.Offer(2);
  EXPECT_FALSE(t.Contains(0));
  EXPECT_EQ(t.used(), 3);
  EXPECT_TRUE(t.ReserveSwap(3));  // evicts 1 and the anonymous entry
  EXPECT_EQ(t.swap_used(), 3);
  EXPECT_EQ(t.num_prefix(), 1);
  EXPECT_TRUE(t.Contains(2));
  EXPECT_FALSE(t.Contains(1));
  EXPECT_FALSE(t.ReserveSwap(2));  // only 1 block is not swap space
  EXPECT_EQ(t.swap_used(), 3);
  EXPECT_TRUE(t.ReserveSwap(1));   // evicts 2
  EXPECT_FALSE(t.Offer(5));        // the tier is all swap: dropped
  EXPECT_EQ(t.num_prefix(), 0);
  t.ReleaseSwap(4);
  EXPECT_EQ(t.used(), 0);
  t.CheckInvariants();
}


// The plainest statement of the tier's order: a list, newest first.
struct ListTier {
  int64_t capacity = 0, swap = 0, evictions = 0;
  std::list<uint64_t> lru;
  bool Has(uint64_t h) const {
    return h != 0 && std::find(lru.begin(), lru.end(), h) != lru.end();
  }
  void ToFront(uint64_t h) { lru.remove(h), lru.push_front(h); }
  void Evict() { lru.pop_back(), ++evictions; }
  int64_t used() const { return swap + static_cast<int64_t>(lru.size()); }
  bool Offer(uint64_t h) {
    if (Has(h)) return ToFront(h), false;
    if (swap >= capacity) return false;
    if (used() >= capacity) Evict();
    lru.push_front(h);
    return true;
  }
  bool ReserveSwap(int64_t n) {
    if (n > capacity - swap) return false;
    while (used() + n > capacity) Evict();
    swap += n;
    return true;
  }
};

TEST(CpuTier, RecencyLogMatchesAMoveToFrontList) {
  for (const int64_t capacity : {1, 7, 64, 500}) {
    std::mt19937_64 rng(static_cast<uint64_t>(capacity));
    CpuTier t(capacity);
    ListTier ref;
    ref.capacity = capacity;
    // Few distinct hashes: many refreshes and hits, so the log fills with
    // dead places and compacts; anonymous entries and swap in between.
    const uint64_t distinct = static_cast<uint64_t>(2 * capacity + 3);
    for (int i = 0; i < 60000; ++i) {
      const uint64_t r = rng() % 100;
      const uint64_t h = rng() % distinct;  // 0: anonymous
      if (r < 55) {
        ASSERT_EQ(t.Offer(h), ref.Offer(h)) << "offer " << i;
      } else if (r < 85) {
        if (ref.Has(h)) {
          t.Touch(h);
          ref.ToFront(h);
        }
      } else if (r < 93) {
        const int64_t n = static_cast<int64_t>(rng() % 3);
        ASSERT_EQ(t.ReserveSwap(n), ref.ReserveSwap(n)) << "reserve " << i;
      } else if (ref.swap > 0) {
        t.ReleaseSwap(1);
        --ref.swap;
      }
      ASSERT_EQ(t.Contains(h), ref.Has(h)) << i;
      ASSERT_EQ(t.num_prefix(), static_cast<int64_t>(ref.lru.size())) << i;
      ASSERT_EQ(t.evictions(), ref.evictions) << i;
      if (i % 997 == 0) t.CheckInvariants();
    }
    for (uint64_t h = 1; h < distinct; ++h) EXPECT_EQ(t.Contains(h), ref.Has(h)) << h;
    t.CheckInvariants();
  }
}

}  // namespace
}  // namespace servesim
