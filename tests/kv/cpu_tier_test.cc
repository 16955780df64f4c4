// The CPU offload tier: swap space before prefix blocks, LRU order, hits
// that stay, anonymous entries.
#include "sim/kv/cpu_tier.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace servesim
