// BlockPool: all-or-nothing allocation, reference counts, free-queue order.
#include "sim/kv/block_pool.h"

#include <gtest/gtest.h>

#include <set>

namespace servesim {
namespace {

TEST(BlockPool, AllocatesDistinctBlocksAllOrNothing) {
  BlockPool pool(10);
  std::vector<int32_t> a, b;
  ASSERT_TRUE(pool.Allocate(6, &a));
  EXPECT_FALSE(pool.Allocate(5, &b));  // only 4 left
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(pool.num_free(), 4);
  ASSERT_TRUE(pool.Allocate(4, &b));
  std::set<int32_t> all(a.begin(), a.end());
  all.insert(b.begin(), b.end());
  EXPECT_EQ(all.size(), 10u);
  EXPECT_EQ(pool.num_used(), 10);
  pool.CheckInvariants();
}

// vLLM's free order: blocks holding no cached prefix are reused first, most
// recently freed first (a sequence's tail block first); cached blocks wait
// at the tail, least recently freed first.
TEST(BlockPool, UncachedBlocksAreReusedMostRecentlyFreedFirst) {
  BlockPool pool(5);
  std::vector<int32_t> a, b;
  ASSERT_TRUE(pool.Allocate(2, &a));
  ASSERT_TRUE(pool.Allocate(2, &b));
  pool.Release(a, nullptr);
  pool.Release(b, nullptr);
  std::vector<int32_t> c;
  ASSERT_TRUE(pool.Allocate(5, &c));
  EXPECT_EQ(c, (std::vector<int32_t>{b[1], b[0], a[1], a[0], 4}));
  pool.CheckInvariants();
}

TEST(BlockPool, CachedBlocksGoToTheTailUncachedToTheHead) {
  BlockPool pool(6);
  std::vector<int32_t> a, b;
  ASSERT_TRUE(pool.Allocate(3, &a));  // 0 1 2
  ASSERT_TRUE(pool.Allocate(3, &b));  // 3 4 5
  std::vector<uint64_t> cached(6, 0);
  cached[a[0]] = cached[a[1]] = 7;  // a's two full blocks are cached
  cached[b[0]] = 9;
  pool.Release(a, cached.data());
  pool.Release(b, cached.data());
  std::vector<int32_t> c;
  ASSERT_TRUE(pool.Allocate(6, &c));
  EXPECT_EQ(c, (std::vector<int32_t>{b[2], b[1], a[2], a[1], a[0], b[0]}));
  pool.CheckInvariants();
}

TEST(BlockPool, RandomizedAllocateReleaseKeepsInvariants) {
  BlockPool pool(64);
  std::vector<std::vector<int32_t>> owners(8);
  uint64_t x = 12345;
  for (int step = 0; step < 5000; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    auto& o = owners[(x >> 33) % owners.size()];
    if ((x >> 20) % 3 == 0) {
      pool.Release(o, nullptr);
      o.clear();
    } else {
      const int32_t n = static_cast<int32_t>((x >> 40) % 6);
      const int32_t before = pool.num_free();
      if (!pool.Allocate(n, &o)) {
        EXPECT_EQ(pool.num_free(), before);
      }
    }
    int32_t held = 0;
    for (const auto& v : owners) held += static_cast<int32_t>(v.size());
    ASSERT_EQ(held, pool.num_used());
    ASSERT_EQ(pool.num_free() + pool.num_used(), pool.num_blocks());
  }
  pool.CheckInvariants();
}

TEST(BlockPoolDeathTest, DoubleReleaseAborts) {
  BlockPool pool(2);
  std::vector<int32_t> a;
  ASSERT_TRUE(pool.Allocate(1, &a));
  pool.Release(a, nullptr);
  EXPECT_DEATH(pool.Release(a, nullptr), "not in use");
}

}  // namespace
}  // namespace servesim
