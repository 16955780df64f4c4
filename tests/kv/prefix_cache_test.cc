// PrefixCache (the fast engine's prefix cache) against KvCache (the
// reference engine's): the same operations in lockstep give the same hits,
// free and cached counts, evictions and eviction log, through shared runs,
// private registration, publishing and tight caches.
#include "sim/kv/prefix_cache.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/kv/kv_cache.h"

namespace servesim {
namespace {

TEST(PrefixCache, PrivateBlocksAreAnonymousAndEvictedInOrder) {
  PrefixCache fast(4);
  std::vector<uint64_t> log;
  fast.set_eviction_log(&log);
  BlockList a;
  ASSERT_TRUE(fast.AcquireRun(-1, 3, 3, &a));
  fast.Register(&a, 0, 7);  // named
  fast.RegisterPrivate(&a, 1, 2);
  EXPECT_EQ(a.ids().size(), 1u);
  EXPECT_EQ(a.counted(), 2);
  EXPECT_EQ(a.cached(), 2);
  fast.Release(a);
  EXPECT_EQ(fast.num_free(), 4);
  EXPECT_EQ(fast.num_cached_free(), 3);
  // One uncached block first, then a's private run (freed before its
  // head), then the hashed block.
  BlockList b;
  ASSERT_TRUE(fast.AcquireRun(-1, 3, 3, &b));
  EXPECT_EQ(log, (std::vector<uint64_t>{0, 0}));
  const uint64_t h = 7;
  EXPECT_EQ(fast.CountHits(&h, 1), 1);
  fast.CheckInvariants();
}

TEST(PrefixCache, SharedRunIsHeldOnceAndFreedByItsLastHolder) {
  PrefixCache fast(8);
  const uint64_t chain[3] = {11, 22, 33};
  BlockList a;
  ASSERT_TRUE(fast.AcquireRun(fast.FindRun(1, chain, 3), 4, 4, &a));
  for (int32_t i = 0; i < 3; ++i) fast.Register(&a, i, chain[i]);
  const int32_t run = fast.FindRun(1, chain, 3);
  ASSERT_GE(run, 0);
  EXPECT_EQ(fast.run_len(run), 3);
  EXPECT_EQ(fast.FindRun(1, chain, 3), run);  // memoised
  BlockList b, c;
  ASSERT_TRUE(fast.AcquireRun(run, 1, 1, &b));
  ASSERT_TRUE(fast.AcquireRun(run, 1, 1, &c));
  EXPECT_EQ(fast.run_holders(run), 2);
  EXPECT_EQ(fast.ref_count(a.ids()[0]), 2);  // a's own and the run's
  fast.Release(a);
  fast.Release(b);
  EXPECT_EQ(fast.num_cached_free(), 0);
  fast.Release(c);
  EXPECT_EQ(fast.num_cached_free(), 3);
  fast.CheckInvariants();
}

// A memo stands only while a fresh lookup would find the same: its first
// miss entering the map, or one of its blocks evicted, forgets it.
TEST(PrefixCache, MemoIsForgottenWhenALookupWouldChange) {
  PrefixCache fast(6);
  const uint64_t chain[3] = {11, 22, 33};
  BlockList a;
  ASSERT_TRUE(fast.AcquireRun(fast.FindRun(1, chain, 3), 2, 2, &a));
  fast.Register(&a, 0, chain[0]);
  EXPECT_EQ(fast.MemoisedRun(1, 3), PrefixCache::kNoRun);  // 11 was its miss
  const int32_t run = fast.FindRun(1, chain, 3);
  EXPECT_EQ(fast.run_len(run), fast.CountHits(chain, 3));
  EXPECT_EQ(fast.MemoisedRun(1, 3), run);
  EXPECT_EQ(fast.MemoisedRun(1, 2), PrefixCache::kNoRun);  // another length
  fast.Register(&a, 1, 99);  // not on the chain: the memo stands
  EXPECT_EQ(fast.MemoisedRun(1, 3), run);
  fast.Release(a);
  fast.CheckInvariants();
  // Evicting the prefix's block (freed last: every block taken) forgets it.
  BlockList b;
  ASSERT_TRUE(fast.AcquireRun(-1, 6, 6, &b));
  EXPECT_EQ(fast.CountHits(chain, 3), 0);
  EXPECT_EQ(fast.MemoisedRun(1, 3), PrefixCache::kNoRun);
  EXPECT_EQ(fast.FindRun(1, chain, 3), -1);
  fast.CheckInvariants();
}

// More prefixes than the memo table first holds: each keeps its own memo.
TEST(PrefixCache, ManyPrefixesKeepTheirOwnMemos) {
  PrefixCache fast(512);
  std::vector<BlockList> lists(200);
  std::vector<int32_t> runs;
  for (uint64_t key = 1; key <= lists.size(); ++key) {
    const uint64_t chain[2] = {key * 100, key * 100 + 1};
    BlockList& l = lists[key - 1];
    ASSERT_TRUE(fast.AcquireRun(fast.FindRun(key, chain, 2), 2, 2, &l));
    fast.Register(&l, 0, chain[0]);
    fast.Register(&l, 1, chain[1]);
    runs.push_back(fast.FindRun(key, chain, 2));
    ASSERT_EQ(fast.run_len(runs.back()), 2);
  }
  for (uint64_t key = 1; key <= lists.size(); ++key) {
    EXPECT_EQ(fast.MemoisedRun(key, 2), runs[key - 1]) << key;
  }
  fast.CheckInvariants();
}

// Lockstep: requests with one of a few prefixes (hits by shared run or by
// id), private streams, and preemptions that publish; a pool small enough
// to evict all the time.
TEST(PrefixCache, MatchesKvCacheStepForStep) {
  for (const int32_t num_blocks : {24, 64}) {
    KvCache ref(num_blocks, true, /*counted_pool=*/false);
    PrefixCache fast(num_blocks);
    std::vector<uint64_t> ref_log, fast_log;
    ref.set_eviction_log(&ref_log);
    fast.set_eviction_log(&fast_log);
    struct Holder {
      std::vector<int32_t> ref;
      BlockList fast;
      int32_t prefix = 0, registered = 0, first_private = 0;
      uint64_t stream = 0;
      bool published = false;
      bool live = false;
    };
    std::vector<Holder> held(9);
    uint64_t x = 12345;
    auto next = [&] { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
    auto hash = [](uint64_t tag, int32_t i) { return tag * 1000003ULL + static_cast<uint64_t>(i) + 1; };
    uint64_t streams = 0;
    for (int step = 0; step < 30000; ++step) {
      Holder& h = held[next() % held.size()];
      if (!h.live) {
        h.prefix = static_cast<int32_t>(next() % 4) + 1;
        const int32_t n = static_cast<int32_t>(next() % 5) + 1;
        std::vector<uint64_t> chain;
        for (int32_t i = 0; i < n; ++i) chain.push_back(hash(h.prefix, i));
        std::vector<int32_t> found;
        const int32_t ref_hits = ref.CountHits(chain.data(), n, &found);
        const int32_t memoised = fast.MemoisedRun(static_cast<uint64_t>(h.prefix), n);
        const int32_t run = fast.FindRun(static_cast<uint64_t>(h.prefix), chain.data(), n);
        if (memoised != PrefixCache::kNoRun) {
          ASSERT_EQ(memoised, run) << step;
        }
        ASSERT_EQ(fast.run_len(run), ref_hits) << step;
        const int32_t fresh = n - ref_hits + static_cast<int32_t>(next() % 4);
        const bool ok = ref.AcquireFound(found.data(), ref_hits, fresh, fresh, &h.ref);
        if (next() % 4 == 0) {
          // Hits by id (as a preempted request's): they may lie in a run's
          // parked entry.
          std::vector<int32_t> fast_found;
          ASSERT_EQ(fast.CountHits(chain.data(), n, &fast_found), ref_hits) << step;
          ASSERT_EQ(fast.AcquireFound(fast_found.data(), ref_hits, fresh, fresh, &h.fast), ok)
              << step;
        } else {
          ASSERT_EQ(fast.AcquireRun(run, fresh, fresh, &h.fast), ok) << step;
        }
        if (!ok) continue;
        h.live = true;
        h.published = false;
        h.registered = ref_hits;
        h.first_private = n;
        h.stream = ++streams;
      } else if (next() % 3 != 0) {
        // Register the next few blocks: the prefix's shared, then private.
        const int32_t upto = std::min<int32_t>(static_cast<int32_t>(h.ref.size()),
                                               h.registered + static_cast<int32_t>(next() % 3));
        for (int32_t i = h.registered; i < upto; ++i) {
          if (i < h.first_private) {
            ref.Register(h.ref[i], hash(h.prefix, i));
            fast.Register(&h.fast, i, hash(h.prefix, i));
          } else if (h.published) {
            ref.Register(h.ref[i], hash(100 + h.stream, i));
            fast.Register(&h.fast, i, hash(100 + h.stream, i));
          } else {
            ref.RegisterPrivate(h.ref[i]);
            fast.RegisterPrivate(&h.fast, i, 1);
          }
        }
        h.registered = std::max(h.registered, upto);
        if (!h.published && next() % 5 == 0 && h.registered > h.first_private) {
          // Preempted: its private blocks join the map (it stays here
          // holding them, as if readmitted).
          std::vector<uint64_t> hs;
          for (int32_t i = 0; i < h.registered; ++i) hs.push_back(hash(100 + h.stream, i));
          for (int32_t i = h.first_private; i < h.registered; ++i) ref.Publish(h.ref[i], hs[i]);
          fast.Publish(&h.fast, h.first_private, hs.data());
          h.published = true;
        }
      } else {
        ref.Release(h.ref);
        fast.Release(h.fast);
        h.ref.clear();
        h.fast.clear();
        h.live = false;
      }
      ASSERT_EQ(fast.num_free(), ref.num_free()) << step;
      ASSERT_EQ(fast.num_cached_free(), ref.num_cached_free()) << step;
      ASSERT_EQ(fast.evictions(), ref.evictions()) << step;
      ASSERT_EQ(fast_log, ref_log) << step;
      fast.CheckInvariants();  // every step: the pools are small
      ref.CheckInvariants();
    }
    EXPECT_GT(ref.evictions(), 100);
  }
}

}  // namespace
}  // namespace servesim
