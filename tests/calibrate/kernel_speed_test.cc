// Kernel speed report: byte and FLOP counts of the two shapes,
// worked out by hand for Llama-3.1-8B (32 query heads, 8 KV heads, d=128,
// bf16), and the fractions of the ceilings they imply.
#include "calibrate/kernel_speed.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/model/model_loader.h"

namespace servesim::calibrate {
namespace {

DeviceInfo Ceilings(double copy, double gemm) {
  DeviceInfo d;
  d.copy_bytes_per_s = copy;
  d.gemm_bf16_flops = gemm;
  return d;
}

TEST(KernelSpeed, HandCountedDecodeAndPrefill) {
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  const std::vector<OpTiming> t = {
      {{OpKind::kDecodeAttention, 0, 64, 4096}, 0.5e-3, 0.5e-3, 0.5e-3, 10},
      {{OpKind::kPrefillAttention, 8192, 0, 0}, 1e-3, 1e-3, 1e-3, 10}};
  const auto rows = KernelSpeed(m, 1, Ceilings(4e12, 989e12), t);
  ASSERT_EQ(rows.size(), 2u);
  // Decode: 64 sequences read K and V of 4097 keys x 8 heads x 128 x 2 B,
  // plus q in and out (64 x 32 x 128 x 2 B each).
  EXPECT_DOUBLE_EQ(rows[0].bytes, 64.0 * 2 * 8 * 128 * 2 * 4097 + 64.0 * 2 * 32 * 128 * 2);
  EXPECT_DOUBLE_EQ(rows[0].bytes, 1075052544.0);
  EXPECT_DOUBLE_EQ(rows[0].flops, 64.0 * 4 * 32 * 128 * 4097);
  EXPECT_TRUE(rows[0].memory_bound);  // 4 FLOP/byte, ridge ~247
  EXPECT_NEAR(rows[0].fraction, 1075052544.0 / 0.5e-3 / 4e12, 1e-12);
  EXPECT_DOUBLE_EQ(rows[0].goal, 0.8);
  // Prefill: causal, token i (1..8192) attends to i keys: QK^T and PV are
  // 2 x 2 x 32 heads x 128 x sum_i i = 16384 x 8192 x 8193 / 2 FLOPs.
  EXPECT_DOUBLE_EQ(rows[1].flops, 549822922752.0);
  EXPECT_FALSE(rows[1].memory_bound);
  EXPECT_NEAR(rows[1].fraction, 549822922752.0 / 1e-3 / 989e12, 1e-12);
  EXPECT_DOUBLE_EQ(rows[1].goal, 0.4);
  // The table says whether each goal is met.
  KernelSpeedContext ctx;
  ctx.copy_bytes_per_s = 4e12;
  ctx.gemm_bf16_flops = 989e12;
  const std::string table = KernelSpeedTable(rows, ctx);
  EXPECT_NE(table.find(">= 80% of copy: SHORT"), std::string::npos) << table;  // 53.8%
  EXPECT_NE(table.find(">= 40% of GEMM: met"), std::string::npos) << table;    // 55.6%
}

TEST(KernelSpeed, NoCeilingsNoFractionAndBadInputsRefused) {
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  const OpTiming decode{{OpKind::kDecodeAttention, 0, 64, 4096}, 1e-3, 1e-3, 1e-3, 3};
  const auto rows = KernelSpeed(m, 1, DeviceInfo{}, {decode});
  EXPECT_EQ(rows[0].fraction, 0);
  EXPECT_GT(rows[0].achieved_bytes_per_s, 0);
  OpTiming zero = decode;
  zero.median_s = 0;
  EXPECT_THROW(KernelSpeed(m, 1, DeviceInfo{}, {zero}), std::invalid_argument);
  const OpTiming gemm{{OpKind::kGemmQkv, 64, 0, 0}, 1e-5, 1e-5, 1e-5, 3};
  EXPECT_THROW(KernelSpeed(m, 1, DeviceInfo{}, {gemm}), std::invalid_argument);
}

TEST(KernelSpeed, PointsIncludeBothGoalShapes) {
  int goals = 0;
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  std::vector<OpTiming> t;
  for (const OpPoint& p : KernelSpeedPoints()) t.push_back({p, 1e-3, 1e-3, 1e-3, 1});
  for (const KernelSpeedRow& r : KernelSpeed(m, 1, Ceilings(4e12, 989e12), t)) {
    goals += r.goal > 0;
  }
  EXPECT_EQ(goals, 2);
}

}  // namespace
}  // namespace servesim::calibrate
