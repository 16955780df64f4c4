// Tests of the calibration grid: the ranges the calibration issue asks for.
#include "calibrate/grid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sim/cost/op_features.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate {
namespace {

struct Span {
  int64_t lo_tokens = INT64_MAX, hi_tokens = 0, lo_batch = INT64_MAX,
          hi_batch = 0, lo_ctx = INT64_MAX, hi_ctx = 0;
  int n = 0;
};

std::map<OpKind, Span> Spans(const std::vector<OpPoint>& grid) {
  std::map<OpKind, Span> s;
  for (const OpPoint& p : grid) {
    Span& x = s[p.kind];
    x.lo_tokens = std::min(x.lo_tokens, p.tokens);
    x.hi_tokens = std::max(x.hi_tokens, p.tokens);
    x.lo_batch = std::min(x.lo_batch, p.batch);
    x.hi_batch = std::max(x.hi_batch, p.batch);
    x.lo_ctx = std::min(x.lo_ctx, p.context);
    x.hi_ctx = std::max(x.hi_ctx, p.context);
    ++x.n;
  }
  return s;
}

TEST(GridTest, RangesMatchTheIssue) {
  const auto s =
      Spans(MakeGrid(LoadModelSpec("llama-3.1-8b"), 1, GridOptions{}));
  for (OpKind k :
       {OpKind::kGemmQkv, OpKind::kGemmO, OpKind::kGemmGateUp,
        OpKind::kGemmDown, OpKind::kGemmLmHead, OpKind::kElementwise}) {
    EXPECT_EQ(s.at(k).lo_tokens, 1) << OpKindName(k);
    EXPECT_EQ(s.at(k).hi_tokens, 16384) << OpKindName(k);
  }
  const Span& d = s.at(OpKind::kDecodeAttention);
  EXPECT_EQ(d.lo_batch, 1);
  EXPECT_EQ(d.hi_batch, 512);
  EXPECT_EQ(d.lo_ctx, 128);
  EXPECT_EQ(d.hi_ctx, 32768);
  const Span& p = s.at(OpKind::kPrefillAttention);
  EXPECT_EQ(p.lo_tokens, 64);
  EXPECT_EQ(p.hi_tokens, 8192);
  EXPECT_EQ(p.lo_ctx, 0);
  EXPECT_EQ(p.hi_ctx, 32768);
}

TEST(GridTest, TokenGridIsDenserAroundTheRidge) {
  const std::vector<int64_t> m = TokenGrid(GridOptions{});
  ASSERT_TRUE(std::is_sorted(m.begin(), m.end()));
  auto count = [&](int64_t lo, int64_t hi) {
    return std::count_if(m.begin(), m.end(),
                         [&](int64_t v) { return v >= lo && v < hi; });
  };
  // One octave inside the dense band has more points than one outside.
  EXPECT_GE(count(128, 256), 4);
  EXPECT_LE(count(4096, 8192), 2);
}

TEST(GridTest, SmallBudgetThinsTheGridButKeepsTheEnds) {
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  const auto full = MakeGrid(m, 1, GridOptions{});
  const auto small = MakeGrid(m, 1, GridOptionsForBudget(20));
  EXPECT_LT(small.size(), full.size() / 2);
  const auto s = Spans(small);
  EXPECT_EQ(s.at(OpKind::kDecodeAttention).hi_batch, 512);
  EXPECT_EQ(s.at(OpKind::kDecodeAttention).hi_ctx, 32768);
  EXPECT_EQ(s.at(OpKind::kGemmQkv).hi_tokens, 16384);
}

TEST(GridTest, OpKindNamesAreTheProfileOpNames) {
  EXPECT_STREQ(OpKindName(OpKind::kGemmQkv), "gemm_qkv");
  EXPECT_STREQ(OpKindName(OpKind::kGemmLmHead), "gemm_lm_head");
  EXPECT_STREQ(OpKindName(OpKind::kDecodeAttention), "decode_attention");
  EXPECT_STREQ(OpKindName(OpKind::kElementwise), "elementwise");
  for (int i = 0; i < kNumProfileOps; ++i) {
    ProfileOp op;
    ASSERT_TRUE(ProfileOpFromName(OpKindName(static_cast<OpKind>(i)), &op));
    EXPECT_EQ(static_cast<int>(op), i);
  }
}

}  // namespace
}  // namespace servesim::calibrate
