// The validated answer's statistics: the lower quantile of log-normal
// window thresholds and its interval, checked for coverage on known data.
#include "sim/analysis/capacity_validation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/rng.h"

namespace servesim {
namespace {

TEST(CapacityValidation, QuantileOfAKnownSample) {
  // log rates {-0.1, 0, 0.1}: mean 0, sd 0.1; z(0.95) = 1.64485.
  const Interval q = LowerQuantileOfLogNormal({std::exp(-0.1), 1.0, std::exp(0.1)}, 0.95);
  EXPECT_NEAR(q.mean, std::exp(-0.164485), 1e-5);
  // se = 0.1 sqrt(1/3 + z^2/4), t(2) = 4.3027.
  const double half = 4.3027 * 0.1 * std::sqrt(1.0 / 3 + 1.64485 * 1.64485 / 4);
  EXPECT_NEAR(std::log(q.hi) - std::log(q.mean), half, 1e-4);
  EXPECT_NEAR(std::log(q.mean) - std::log(q.lo), half, 1e-4);
  EXPECT_EQ(q.n, 3);
}

// The interval is a large-sample one: at the sizes validation uses (10 to
// 40 windows) it must still cover the true 5% quantile about 95% of the
// time, and the point estimate must be nearly unbiased.
TEST(CapacityValidation, IntervalCoversTheTrueQuantile) {
  Rng rng(29, "validation-coverage");
  const double m = std::log(2.5), s = 0.08, share = 0.95;
  const double truth = std::exp(m - 1.6448536 * s);
  for (int n : {10, 20, 40}) {
    int covered = 0, below = 0;
    const int trials = 3000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> rates;
      for (int i = 0; i < n; ++i) rates.push_back(std::exp(m + s * rng.StandardNormal()));
      const Interval q = LowerQuantileOfLogNormal(rates, share);
      covered += q.lo <= truth && truth <= q.hi;
      below += q.mean < truth;
    }
    const double coverage = covered / static_cast<double>(trials);
    // Binomial(3000, 0.95): std 0.4 pt; the approximation may lose a point
    // at n = 10.
    EXPECT_GT(coverage, 0.925) << n << " windows";
    EXPECT_LT(coverage, 0.975) << n << " windows";
    EXPECT_NEAR(below / static_cast<double>(trials), 0.5, 0.06) << n << " windows";
  }
}

}  // namespace
}  // namespace servesim
