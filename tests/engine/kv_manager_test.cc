// The request-level KV manager on its own (sim/engine/kv_manager.h), worked
// by hand: a shared prefix registered by one request and found by the next
// (never the last known token), allocation that changes nothing when the
// pool is short, and swap preemption out to the CPU tier and back.
#include "sim/engine/kv_manager.h"

#include <gtest/gtest.h>

namespace servesim {
namespace {

EngineConfig Config(int32_t blocks, bool prefix_caching, int32_t cpu_blocks = 0) {
  EngineConfig c;
  c.block_size = 16;
  c.num_gpu_blocks = blocks;
  c.prefix_caching = prefix_caching;
  c.cpu_blocks = cpu_blocks;
  c.swap_preemption = cpu_blocks > 0;
  return c;
}

Request Prompt(int64_t id, int32_t len, uint64_t prefix, int32_t prefix_len) {
  Request r;
  r.id = id;
  r.prompt_len = len;
  r.output_len = 8;
  r.content.prefix_id = prefix;
  r.content.prefix_len = prefix_len;
  r.content.stream_id = 1000 + static_cast<uint64_t>(id);
  return r;
}

// A takes 64 tokens (a 48-token shared prefix: 3 full blocks of it) and
// registers its full blocks; B, with the same prefix, finds those 3
// blocks, and no more: its own tokens follow.
TEST(KvManagerTest, SharedPrefixFoundByTheNextRequest) {
  const EngineConfig c = Config(20, true);
  KvManager kv(c, c.num_gpu_blocks);
  Request a = Prompt(0, 64, 7, 48);
  KvLookup la = kv.Find(a);
  EXPECT_EQ(la.hits, 0);
  ASSERT_TRUE(kv.Allocate(a, la, 4, 4));
  a.num_computed = 64;
  kv.RegisterFullBlocks(a, 64);
  EXPECT_EQ(a.num_registered, 4);
  Request b = Prompt(1, 40, 7, 48);  // a prompt inside the prefix
  const KvLookup lb = kv.Find(b);
  // At least its last token is computed: (40 - 1) / 16 = 2 blocks.
  EXPECT_EQ(lb.hits, 2);
  EXPECT_EQ(lb.cached, 32);
  Request b2 = Prompt(2, 100, 7, 48);
  EXPECT_EQ(kv.Find(b2).hits, 3);  // the prefix's 3 full blocks
  EXPECT_EQ(kv.Probe(b2).cached_tokens, 48);
  kv.cache().CheckInvariants();
}

// Allocation asks for `reserve` free blocks; short of them nothing moves.
TEST(KvManagerTest, ShortPoolChangesNothing) {
  const EngineConfig c = Config(4, false);
  KvManager kv(c, c.num_gpu_blocks);
  Request a = Prompt(0, 48, 0, 0);
  const KvLookup l = kv.Find(a);
  EXPECT_FALSE(kv.Allocate(a, l, 3, 5));
  EXPECT_EQ(a.blocks.size(), 0);
  EXPECT_EQ(kv.cache().num_free(), 4);
  ASSERT_TRUE(kv.Allocate(a, l, 3, 3));
  TransferCounts t;
  EXPECT_TRUE(kv.EnsureBlocks(a, 64, &t));   // a 4th block
  EXPECT_FALSE(kv.EnsureBlocks(a, 65, &t));  // a 5th: none left
  EXPECT_EQ(kv.cache().num_free(), 0);
  kv.Free(a);
  EXPECT_EQ(kv.cache().num_free(), 4);
}

// Swap preemption: 40 computed tokens (3 blocks) go to the CPU tier and
// free the GPU's; readmitted, its copy serves 39 of its 40 known tokens
// (the last is computed) and comes back (3 blocks), the tier released.
TEST(KvManagerTest, SwapOutAndBackIn) {
  const EngineConfig c = Config(8, false, /*cpu_blocks=*/16);
  KvManager kv(c, c.num_gpu_blocks);
  Request a = Prompt(0, 40, 0, 0);
  KvLookup l = kv.Find(a);
  ASSERT_TRUE(kv.Allocate(a, l, 3, 3));
  a.num_computed = 40;
  TransferCounts t;
  kv.Preempt(a, &t);
  EXPECT_EQ(t.swap_out, 3);
  EXPECT_EQ(a.swap_blocks, 3);
  EXPECT_EQ(a.swapped_tokens, 40);
  EXPECT_EQ(kv.cache().num_free(), 8);
  EXPECT_EQ(kv.cpu_tier()->swap_used(), 3);
  EXPECT_EQ(kv.swap_preemptions(), 1);
  a.num_computed = 0;
  ++a.preemptions;
  l = kv.Find(a);
  EXPECT_EQ(l.cached, 39);
  EXPECT_EQ(l.swap_in, 3);
  ASSERT_TRUE(kv.Allocate(a, l, 3, 3));
  kv.Loaded(a, l, &t);
  EXPECT_EQ(t.swap_in, 3);
  EXPECT_EQ(a.swap_blocks, 0);
  EXPECT_EQ(kv.cpu_tier()->swap_used(), 0);
}

}  // namespace
}  // namespace servesim
