// Student-t intervals: table values and coverage on known data.
#include "sim/analysis/confidence.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/rng.h"

namespace servesim {
namespace {

TEST(Confidence, StudentQuantilesMatchTables) {
  EXPECT_NEAR(StudentT975(1), 12.706, 1e-3);
  EXPECT_NEAR(StudentT975(4), 2.776, 1e-3);   // 5 replications
  EXPECT_NEAR(StudentT975(40), 2.021, 1e-3);
  EXPECT_NEAR(StudentT975(120), 1.980, 1e-3);
}

TEST(Confidence, IntervalOfKnownSample) {
  // mean 3, sample std sqrt(2.5), se = sqrt(2.5/5), t4 = 2.7764
  const Interval i = MeanInterval({1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(i.mean, 3);
  EXPECT_NEAR(i.hi - i.mean, 2.7764 * std::sqrt(0.5), 1e-4);
}

TEST(Confidence, NinetyFivePercentCoverage) {
  Rng rng(17, "coverage");
  int covered = 0;
  const int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> xs;
    for (int i = 0; i < 5; ++i) xs.push_back(10 + 3 * rng.StandardNormal());
    const Interval iv = MeanInterval(xs);
    covered += iv.lo <= 10 && 10 <= iv.hi;
  }
  // Binomial(4000, 0.95): std 0.34 pt; allow 4 sigma.
  EXPECT_NEAR(covered / static_cast<double>(trials), 0.95, 0.014);
}

TEST(Confidence, PercentileIntervalIsNeverNegativeNorAboveTheMax) {
  // The case: three p99s whose t-interval went below zero.
  const std::vector<double> p99 = {210, 1650, 765};
  EXPECT_LT(MeanInterval(p99).lo, 0);
  const Interval i = PercentileInterval(p99, 1900);
  EXPECT_GT(i.lo, 0);
  EXPECT_LE(i.hi, 1900);
  // Geometric mean of the three.
  EXPECT_NEAR(i.mean, std::cbrt(210.0 * 1650 * 765), 1e-9);
  EXPECT_LT(i.lo, i.mean);
  // Zeros (e.g. TPOT of one-token answers) fall back to a clamped t-interval.
  const Interval z = PercentileInterval({0, 0, 3}, 3);
  EXPECT_EQ(z.lo, 0);
  EXPECT_LE(z.hi, 3);
}

TEST(Confidence, LogScaleIntervalCoversTheLogNormalMedian) {
  // Log-normal samples: the interval on the log scale covers the median
  // exp(mu) 95% of the time.
  Rng rng(23, "log coverage");
  int covered = 0;
  const int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> xs;
    for (int i = 0; i < 3; ++i) xs.push_back(std::exp(5 + 0.8 * rng.StandardNormal()));
    const Interval iv = PercentileInterval(xs, INFINITY);
    covered += iv.lo <= std::exp(5) && std::exp(5) <= iv.hi;
  }
  EXPECT_NEAR(covered / static_cast<double>(trials), 0.95, 0.014);
}

TEST(Confidence, PooledPercentileOfReplications) {
  // Two runs of 0..99 and 100..199: pooled p50 is 99.5 (numpy linear).
  std::vector<double> a, b;
  for (int i = 0; i < 100; ++i) a.push_back(i), b.push_back(100 + i);
  const Interval one = PooledPercentileInterval({a}, 50);
  EXPECT_DOUBLE_EQ(one.mean, 49.5);
  EXPECT_EQ(one.lo, one.hi);
  const Interval two = PooledPercentileInterval({a, b}, 50);
  EXPECT_DOUBLE_EQ(two.mean, 99.5);
  EXPECT_GT(two.lo, 0);
  EXPECT_LE(two.hi, 199);  // never above the largest value seen
  EXPECT_LT(two.lo, two.mean);
  // One run with a long excursion holding 1.2% of all requests: the pooled
  // p99 is in it (the mean of per-run p99s would be 1080), and the
  // jackknife, which sees the p99 fall to 100 without that run, is wide.
  std::vector<std::vector<double>> runs(5, std::vector<double>(1000, 100.0));
  for (int i = 0; i < 60; ++i) runs[2][i] = 5000;
  const Interval pooled = PooledPercentileInterval(runs, 99);
  EXPECT_DOUBLE_EQ(pooled.mean, 5000);
  EXPECT_LT(pooled.lo, 1000);
  EXPECT_EQ(pooled.hi, 5000);
}

TEST(Confidence, RelativeHalfWidth) {
  EXPECT_NEAR(RelativeHalfWidth({10, 9, 11, 3}), 0.1, 1e-12);
  EXPECT_TRUE(std::isinf(RelativeHalfWidth({10, 10, 10, 1})));
}

}  // namespace
}  // namespace servesim
