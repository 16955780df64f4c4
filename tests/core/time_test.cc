// Tests for the simulated-time conversions: seconds to nanoseconds rounds,
// and saturates instead of wrapping.
#include "sim/core/time.h"

#include <gtest/gtest.h>

#include <limits>

namespace servesim {
namespace {

TEST(TimeTest, FromSecondsRounds) {
  EXPECT_EQ(FromSeconds(1.5), 1'500'000'000);
  EXPECT_EQ(FromSeconds(1e-9), 1);
  EXPECT_EQ(FromSeconds(0.4e-9), 0);
  EXPECT_EQ(FromSeconds(-2), -2'000'000'000);
  EXPECT_EQ(FromSeconds(kMaxSpanSeconds), 100'000'000LL * kNanosPerSecond);
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
