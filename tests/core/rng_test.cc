// Tests for Rng: stream identity (seed + purpose), a pinned reference
// sequence, and the moments of each variate against their formulas.
#include "sim/core/rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace servesim {
namespace {

struct Moments {
  double mean = 0;
  double var = 0;
};

template <typename Draw>
Moments SampleMoments(int n, Draw draw) {
  // Welford's update keeps the variance accurate for large n.
  double mean = 0, m2 = 0;
  for (int i = 1; i <= n; ++i) {
    const double x = draw();
    const double d = x - mean;
    mean += d / i;
    m2 += d * (x - mean);
  }
  return {mean, m2 / (n - 1)};
}

TEST(RngTest, SameSeedAndPurposeGiveTheSameSequence) {
  Rng a(7, "arrivals"), b(7, "arrivals");
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.NextU64(), b.NextU64()) << i;
}

TEST(RngTest, DifferentPurposeOrSeedGivesADifferentSequence) {
  Rng base(7, "arrivals"), other_purpose(7, "input_len"),
      other_seed(8, "arrivals");
  int same_purpose_collisions = 0, same_seed_collisions = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = base.NextU64();
    same_purpose_collisions += (x == other_purpose.NextU64());
    same_seed_collisions += (x == other_seed.NextU64());
  }
  EXPECT_EQ(same_purpose_collisions, 0);
  EXPECT_EQ(same_seed_collisions, 0);
}

// Reference values from an independent implementation of splitmix64
// seeding (seed XOR FNV-1a(purpose)) and xoshiro256**, so a seed means the
// same traffic on every platform and across refactors.
TEST(RngTest, MatchesReferenceXoshiro256StarStar) {
  Rng rng(42, "arrivals");
  const std::vector<uint64_t> expected = {
      0x2e466cd1037d97fdULL, 0x56b0d787ef363d94ULL, 0x066738753c9ea3e8ULL,
      0x42fb50d9ff0970a1ULL};
  for (uint64_t want : expected) EXPECT_EQ(rng.NextU64(), want);
  Rng empty(0, "");
  EXPECT_EQ(empty.NextU64(), 0x21382ef092ed7068ULL);
  EXPECT_EQ(empty.NextU64(), 0x5b54c052757adf62ULL);
}

TEST(RngTest, UniformIsInItsIntervalWithMeanHalfAndVarianceTwelfth) {
  Rng rng(1, "uniform");
  double lo = 1, hi = 0;
  const Moments m = SampleMoments(400000, [&] {
    const double u = rng.Uniform();
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    return u;
  });
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  // sd of the mean is sqrt(1/12/n) = 4.6e-4.
  EXPECT_NEAR(m.mean, 0.5, 0.002);
  EXPECT_NEAR(m.var, 1.0 / 12, 0.001);
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.UniformOpen();
    ASSERT_GT(u, 0.0);
    ASSERT_LE(u, 1.0);
  }
}

TEST(RngTest, BelowIsUniformOnItsRange) {
  Rng rng(2, "below");
  const int n = 7, draws = 700000;
  std::vector<int> counts(n, 0);
  for (int i = 0; i < draws; ++i) {
    const uint64_t k = rng.Below(n);
    ASSERT_LT(k, static_cast<uint64_t>(n));
    ++counts[k];
  }
  // Each count is Binomial(700000, 1/7): sd ~ 293, so 2% (2000) is ~7 sd.
  for (int k = 0; k < n; ++k) EXPECT_NEAR(counts[k], draws / n, 2000) << k;
  EXPECT_EQ(rng.Below(1), 0u);
}

TEST(RngTest, StandardNormalHasMeanZeroVarianceOne) {
  Rng rng(3, "normal");
  int beyond_2sd = 0;
  const int n = 400000;
  const Moments m = SampleMoments(n, [&] {
    const double z = rng.StandardNormal();
    beyond_2sd += std::fabs(z) > 2;
    return z;
  });
  // sd of the mean 1/sqrt(n) = 0.0016; sd of the variance sqrt(2/n) = 0.0022.
  EXPECT_NEAR(m.mean, 0.0, 0.008);
  EXPECT_NEAR(m.var, 1.0, 0.011);
  // P(|Z| > 2) = 0.0455: checks the shape, not just two moments.
  EXPECT_NEAR(static_cast<double>(beyond_2sd) / n, 0.0455, 0.0015);
}

TEST(RngTest, ExponentialHasItsMeanAndVariance) {
  Rng rng(4, "exp");
  const Moments m = SampleMoments(400000, [&] { return rng.Exponential(3.0); });
  EXPECT_NEAR(m.mean / 3.0, 1.0, 0.01);
  EXPECT_NEAR(m.var / 9.0, 1.0, 0.03);
}

// Gamma(k, theta): mean k*theta, variance k*theta^2. The relative sd of the
// sample variance is about sqrt((2 + 6/k) / n), 0.8% for k = 0.25 and
// n = 400k, so 5% is > 6 sd; the relative sd of the mean is 1/sqrt(k n),
// 0.32% at worst, so 1.5% is > 4 sd.
TEST(RngTest, GammaHasItsMeanAndVarianceForSmallAndLargeShapes) {
  const int n = 400000;
  for (double shape : {0.25, 0.5, 1.0, 2.5, 10.0}) {
    Rng rng(5, "gamma");
    const double scale = 1.7;
    const Moments m = SampleMoments(n, [&] { return rng.Gamma(shape, scale); });
    EXPECT_NEAR(m.mean / (shape * scale), 1.0, 0.015) << "shape " << shape;
    EXPECT_NEAR(m.var / (shape * scale * scale), 1.0, 0.05)
        << "shape " << shape;
  }
}

TEST(RngTest, GammaDrawsArePositive) {
  Rng rng(6, "gamma");
  for (int i = 0; i < 100000; ++i) ASSERT_GT(rng.Gamma(0.1, 1.0), 0.0);
}

}  // namespace
}  // namespace servesim
