// Tests for the simulated-time conversions: seconds to nanoseconds rounds,
// and saturates instead of wrapping.
#include "sim/core/time.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace servesim {
namespace {

TEST(TimeTest, FromSecondsRounds) {
  EXPECT_EQ(FromSeconds(1.5), 1'500'000'000);
  EXPECT_EQ(FromSeconds(1e-9), 1);
  EXPECT_EQ(FromSeconds(0.4e-9), 0);
  EXPECT_EQ(FromSeconds(-2), -2'000'000'000);
  EXPECT_EQ(FromSeconds(kMaxSpanSeconds), 100'000'000LL * kNanosPerSecond);
}

// RoundHalfAway is std::llround for every finite |x| < 2^63: ties, the
// doubles next to them, every binade's edges, and random bit patterns.
TEST(TimeTest, RoundHalfAwayIsLlround) {
  std::vector<double> xs = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
                            0.49999999999999994, -0.49999999999999994,
                            4503599627370495.5, -4503599627370495.5,
                            0x1p52, 0x1p53 + 2, 0x1p62, -0x1p62,
                            std::nextafter(0x1p63, 0.0), -0x1p63};
  for (int e = -60; e < 63; ++e) {
    for (double k : {0.5, 1.0, 1.5}) {
      const double x = std::ldexp(k, e);
      for (double y : {x, std::nextafter(x, 0.0), std::nextafter(x, 1e300)}) {
        xs.push_back(y);
        xs.push_back(-y);
      }
    }
  }
  for (int64_t i = -2000; i <= 2000; ++i) {
    const double h = static_cast<double>(i) + 0.5;
    xs.insert(xs.end(), {h, std::nextafter(h, -1e300), std::nextafter(h, 1e300)});
  }
  std::mt19937_64 gen(13);
  while (xs.size() < 2'000'000) {
    const double x = std::bit_cast<double>(gen());
    if (std::isfinite(x) && std::fabs(x) < 0x1p63) xs.push_back(x);
    // Nanosecond times: seconds * 1e9 as FromSeconds forms them.
    xs.push_back(std::ldexp(static_cast<double>(gen() >> 11), -53) * 1e3 * 1e9);
  }
  for (double x : xs) ASSERT_EQ(RoundHalfAway(x), std::llround(x)) << x;
  // And std::round where both are in range (LengthClamp::Apply).
  for (double x : xs) {
    if (std::fabs(x) < 0x1p62) {
      ASSERT_EQ(static_cast<double>(RoundHalfAway(x)), std::round(x)) << x;
    }
  }
}

TEST(TimeTest, FromSecondsSaturatesInsteadOfWrapping) {
  // 1e10 s is past int64 nanoseconds (9.2e9 s); converting it used to wrap
  // to a negative time.
  for (double s : {1e10, 1e12, 1e308, std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(FromSeconds(s), kSaturatedTime) << s;
  }
  EXPECT_EQ(FromSeconds(-1e12), -kSaturatedTime);
  EXPECT_EQ(FromSeconds(-std::numeric_limits<double>::infinity()),
            -kSaturatedTime);
  // One more saturated time can be added to any valid time.
  EXPECT_GT(FromSeconds(kMaxSpanSeconds) + kSaturatedTime, 0);
}

}  // namespace
}  // namespace servesim
