// Block hashes taken from the per-prefix memo equal the ones computed
// request by request, whatever the request already had, with a trace (no
// memo), a prefix that does not end on a block, and a full memo.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/engine/block_hashing.h"

namespace servesim {
namespace {

Request WithPrefix(uint64_t prefix_id, int32_t prefix_len, uint64_t stream) {
  Request r;
  r.prompt_len = 400;
  r.output_len = 50;
  r.content.prefix_id = prefix_id;
  r.content.prefix_len = prefix_len;
  r.content.stream_id = stream;
  return r;
}

std::vector<uint64_t> Plain(Request r, int32_t blocks, int32_t bs) {
  r.block_hashes.clear();
  EnsureBlockHashes(&r, blocks, bs);
  return r.block_hashes;
}

TEST(PrefixHashMemo, SameHashesAsComputedPerRequest) {
  PrefixHashMemo memo;
  for (int32_t bs : {16, 10}) {
    for (int32_t prefix_len : {0, 15, 160, 165, 300}) {
      for (int32_t already : {0, 3, 20}) {
        Request r = WithPrefix(7, prefix_len, 100 + already);
        EnsureBlockHashes(&r, already, bs);  // some computed before
        EnsureBlockHashes(&r, 25, bs, &memo);
        EXPECT_EQ(r.block_hashes, Plain(r, 25, bs))
            << "bs " << bs << " prefix_len " << prefix_len << " already " << already;
      }
    }
  }
  // Two requests with one prefix share its blocks' hashes and no more.
  Request a = WithPrefix(9, 64, 1), b = WithPrefix(9, 64, 2);
  EnsureBlockHashes(&a, 10, 16, &memo);
  EnsureBlockHashes(&b, 10, 16, &memo);
  EXPECT_EQ(std::vector<uint64_t>(a.block_hashes.begin(), a.block_hashes.begin() + 4),
            std::vector<uint64_t>(b.block_hashes.begin(), b.block_hashes.begin() + 4));
  EXPECT_NE(a.block_hashes[4], b.block_hashes[4]);
}

TEST(PrefixHashMemo, TraceBlocksAreNotTakenFromTheMemo) {
  PrefixHashMemo memo;
  Request r = WithPrefix(3, 160, 5);
  r.content.trace_hashes = std::make_shared<const std::vector<uint64_t>>(
      std::vector<uint64_t>{11, 12, 13, 14});
  r.content.trace_block_tokens = 32;
  EnsureBlockHashes(&r, 20, 16, &memo);
  EXPECT_EQ(r.block_hashes, Plain(r, 20, 16));
}

TEST(PrefixHashMemo, AFullMemoStillGivesTheSameHashes) {
  PrefixHashMemo memo;
  // Fill it with one long prefix, then ask for another.
  ASSERT_NE(memo.Chain(1, static_cast<int32_t>(PrefixHashMemo::kMaxHashes)), nullptr);
  EXPECT_EQ(memo.Chain(2, 4), nullptr);
  Request r = WithPrefix(2, 160, 8);
  EnsureBlockHashes(&r, 15, 16, &memo);
  EXPECT_EQ(r.block_hashes, Plain(r, 15, 16));
}

}  // namespace
}  // namespace servesim
