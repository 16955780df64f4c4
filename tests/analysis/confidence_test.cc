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

}  // namespace
}  // namespace servesim
