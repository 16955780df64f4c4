// KvCache: prefix hits take references, cached blocks survive until a fresh
// block is needed, eviction is least-recently-freed first with a chain's
// tail before its head, and shared blocks are never freed while held.
#include "sim/kv/kv_cache.h"

#include <gtest/gtest.h>

#include <map>

namespace servesim {
namespace {

TEST(KvCache, HitsAreALeadingRunAndTakeReferences) {
  KvCache kv(8, true);
  std::vector<int32_t> a;
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 3, &a));
  const uint64_t h[3] = {11, 22, 33};
  for (int i = 0; i < 3; ++i) kv.Register(a[i], h[i]);
  const uint64_t probe[3] = {11, 22, 99};
  EXPECT_EQ(kv.CountHits(probe, 3), 2);
  const uint64_t gap[2] = {99, 22};
  EXPECT_EQ(kv.CountHits(gap, 2), 0);  // a chain, not a set

  std::vector<int32_t> b;
  ASSERT_TRUE(kv.Acquire(h, 2, 1, &b));
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(b[1], a[1]);
  EXPECT_EQ(kv.pool().ref_count(a[0]), 2);
  kv.Release(a);  // shared blocks stay held by b
  EXPECT_EQ(kv.pool().ref_count(a[0]), 1);
  EXPECT_EQ(kv.num_cached_free(), 1);  // block 33, no holder, still cached
  EXPECT_EQ(kv.CountHits(h, 3), 3);
  kv.CheckInvariants();
}

TEST(KvCache, EvictsLazilyLeastRecentlyFreedTailFirst) {
  KvCache kv(4, true);
  std::vector<int32_t> a, b;
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 2, &a));
  const uint64_t ha[2] = {1, 2};
  kv.Register(a[0], 1);
  kv.Register(a[1], 2);
  kv.Release(a);  // free queue: [2 plain], ..., then a's tail (2), head (1)
  EXPECT_EQ(kv.num_cached_free(), 2);
  // Two plain free blocks are used before any cached block is evicted.
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 2, &b));
  EXPECT_EQ(kv.evictions(), 0);
  EXPECT_EQ(kv.CountHits(ha, 2), 2);
  // The next fresh block evicts a's tail block (hash 2), keeping its head.
  std::vector<int32_t> c;
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 1, &c));
  EXPECT_EQ(kv.evictions(), 1);
  EXPECT_EQ(kv.CountHits(ha, 2), 1);
  kv.CheckInvariants();
}

TEST(KvCache, AcquireIsAllOrNothingCountingHitBlocksOnTheFreeQueue) {
  KvCache kv(3, true);
  std::vector<int32_t> a;
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 2, &a));
  kv.Register(a[0], 5);
  kv.Register(a[1], 6);
  kv.Release(a);  // 3 free, 2 of them the cached hits we want
  const uint64_t h[2] = {5, 6};
  std::vector<int32_t> b;
  EXPECT_FALSE(kv.Acquire(h, 2, 2, &b));  // only 1 free block besides hits
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(kv.num_cached_free(), 2);
  EXPECT_TRUE(kv.Acquire(h, 2, 1, &b));
  EXPECT_EQ(kv.num_free(), 0);
  kv.CheckInvariants();
}

// As vLLM (block_pool.py BlockHashToBlockMap): identical blocks computed at
// once are both cached, a lookup finds the first, and evicting the first
// hands the hash to the second.
TEST(KvCache, DuplicateContentIsCachedTwiceAndFoundFirstFirst) {
  KvCache kv(4, true);
  std::vector<int32_t> a, b;
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 1, &a));
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 1, &b));
  kv.Register(a[0], 7);
  kv.Register(b[0], 7);  // computed concurrently: cached too
  kv.Release(b);
  EXPECT_EQ(kv.num_cached_free(), 1);
  const uint64_t h[1] = {7};
  EXPECT_EQ(kv.CountHits(h, 1), 1);
  std::vector<int32_t> c;
  ASSERT_TRUE(kv.Acquire(h, 1, 0, &c));
  EXPECT_EQ(c[0], a[0]);  // the first registered
  kv.CheckInvariants();
  kv.Release(a);
  kv.Release(c);
  // Both cached and free: the free queue holds 2 plain blocks, then b, then
  // a. Taking 3 fresh blocks evicts b; a still answers the hash.
  std::vector<int32_t> d;
  ASSERT_TRUE(kv.Acquire(nullptr, 0, 3, &d));
  EXPECT_EQ(kv.CountHits(h, 1), 1);
  std::vector<int32_t> e;
  ASSERT_TRUE(kv.Acquire(h, 1, 0, &e));
  EXPECT_EQ(e[0], a[0]);
  kv.CheckInvariants();
}

TEST(KvCache, RandomizedSharingAndEvictionKeepInvariants) {
  KvCache kv(64, true);
  std::vector<std::vector<int32_t>> held(10);
  uint64_t x = 99;
  auto next = [&] { return x = x * 6364136223846793005ULL + 1442695040888963407ULL; };
  for (int step = 0; step < 20000; ++step) {
    auto& h = held[(next() >> 33) % held.size()];
    if (!h.empty() && (next() >> 40) % 2) {
      kv.Release(h);
      h.clear();
    } else if (h.empty()) {
      // A chain drawn from 12 "documents" of up to 8 blocks: more distinct
      // blocks than the pool holds, so eviction must happen.
      const uint64_t doc = (next() >> 50) % 12 + 1;
      const int32_t len = static_cast<int32_t>((next() >> 45) % 8) + 1;
      std::vector<uint64_t> hashes;
      for (int32_t i = 0; i < len; ++i) hashes.push_back(doc * 1000 + i);
      const int32_t hits = kv.CountHits(hashes.data(), len);
      if (kv.Acquire(hashes.data(), hits, len - hits, &h)) {
        for (int32_t i = hits; i < len; ++i) kv.Register(h[i], hashes[i]);
      }
    }
    if (step % 97 == 0) kv.CheckInvariants();
    int32_t cached = kv.num_cached_free();
    ASSERT_LE(cached, kv.num_free());
    ASSERT_EQ(kv.num_free() + kv.num_used(), kv.num_blocks());
  }
  kv.CheckInvariants();
  EXPECT_GT(kv.evictions(), 0);
}

}  // namespace
}  // namespace servesim

namespace servesim {
namespace {

// The flat map against std::map under random inserts and erases that
// force long probe runs and wrap-around.
TEST(BlockHashMap, AgreesWithAReferenceMap) {
  BlockHashMap m(300);
  std::map<uint64_t, int32_t> ref;
  uint64_t x = 7;
  for (int step = 0; step < 200000; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t key = (x >> 40) % 700 + 1;  // dense keys collide often
    if ((x >> 20) % 2 && ref.size() < 300) {
      const bool fresh = !ref.count(key);
      EXPECT_EQ(m.Insert(key, static_cast<int32_t>(step)), fresh);
      if (fresh) ref[key] = step;
    } else {
      m.Erase(key);
      ref.erase(key);
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  for (uint64_t k = 1; k <= 700; ++k) {
    auto it = ref.find(k);
    ASSERT_EQ(m.Find(k), it == ref.end() ? -1 : it->second) << k;
  }
}

}  // namespace
}  // namespace servesim
