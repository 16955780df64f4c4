// Without prefix caching the pool is counted (no block ids): it must grant
// and refuse exactly as the linked free queue does, and refuse what no
// holder could release.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "sim/kv/block_pool.h"

namespace servesim {
namespace {

TEST(BlockPoolCounted, SameCountsAsTheLinkedQueue) {
  constexpr int32_t kBlocks = 300;
  BlockPool list(kBlocks), counted(kBlocks, /*counted=*/true);
  std::mt19937_64 gen(5);
  std::vector<std::vector<int32_t>> held_list;
  std::vector<BlockList> held_counted;
  for (int step = 0; step < 20000; ++step) {
    if (!held_list.empty() && gen() % 3 == 0) {
      const size_t i = gen() % held_list.size();
      list.Release(held_list[i], nullptr);
      counted.Release(held_counted[i]);
      held_list.erase(held_list.begin() + static_cast<ptrdiff_t>(i));
      held_counted.erase(held_counted.begin() + static_cast<ptrdiff_t>(i));
    } else {
      const int32_t n = static_cast<int32_t>(gen() % 12);
      std::vector<int32_t> a;
      BlockList b;
      const bool ok_list = list.Allocate(n, &a);
      ASSERT_EQ(ok_list, counted.Allocate(n, &b)) << "step " << step;
      if (ok_list) {
        ASSERT_EQ(b.size(), n);
        ASSERT_TRUE(b.ids().empty());
        held_list.push_back(a);
        held_counted.push_back(b);
      } else {
        ASSERT_TRUE(b.empty());
      }
    }
    ASSERT_EQ(list.num_free(), counted.num_free());
  }
  list.CheckInvariants();
  counted.CheckInvariants();
}

TEST(BlockPoolCountedDeathTest, RefusesMoreThanHeldAndIds) {
  BlockPool pool(4, /*counted=*/true);
  BlockList a;
  ASSERT_TRUE(pool.Allocate(3, &a));
  BlockList twice;
  twice.AddCounted(5);
  EXPECT_DEATH(pool.Release(twice), "more blocks freed than held");
  BlockList ids;
  ids.push_back(0);
  EXPECT_DEATH(pool.Release(ids), "block ids released to a counted pool");
  std::vector<int32_t> v;
  EXPECT_DEATH(pool.Allocate(1, &v), "block ids asked of a counted pool");
}

TEST(BlockList, MoveTailMovesIdsOrCounts) {
  BlockList a, b;
  for (int32_t i = 0; i < 5; ++i) a.push_back(i);
  a.MoveTail(2, &b);
  EXPECT_EQ(a.ids(), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(b.ids(), (std::vector<int32_t>{3, 4}));
  BlockList c, d;
  c.AddCounted(7);
  c.MoveTail(3, &d);
  EXPECT_EQ(c.size(), 4);
  EXPECT_EQ(d.size(), 3);
  EXPECT_TRUE(d.ids().empty());
}

}  // namespace
}  // namespace servesim
