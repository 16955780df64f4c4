// RepeatedSum must equal the plain loop bit for bit (it replaces one
// histogram call per token), and a weighted histogram sample must equal
// that many single ones in every statistic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "sim/metrics/log_histogram.h"
#include "sim/metrics/repeated_sum.h"

namespace servesim {
namespace {

double Loop(double s, double y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) s += y;
  return s;
}

uint64_t Bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

void ExpectSameAsLoop(double s, double y, int64_t n) {
  EXPECT_EQ(Bits(RepeatedSum(s, y, n)), Bits(Loop(s, y, n)))
      << "s=" << s << " y=" << y << " n=" << n;
}

TEST(RepeatedSum, EqualsTheLoopOnRandomIntegerSums) {
  std::mt19937_64 gen(7);
  for (int i = 0; i < 3000; ++i) {
    // Gaps (ns) up to ~1 s and their squares, from empty to far past 2^53.
    const double x = static_cast<double>(gen() % (1ull << (gen() % 31)));
    const double y = (i % 2) ? x * x : x;
    const double s = std::ldexp(static_cast<double>(gen() >> 11), static_cast<int>(gen() % 70) - 53);
    const double start = i % 5 == 0 ? 0.0 : std::floor(s);
    ExpectSameAsLoop(start, y, static_cast<int64_t>(gen() % 20000));
  }
}

TEST(RepeatedSum, CrossesManyBinadesAndHandlesTies) {
  ExpectSameAsLoop(0, 1, 1000000);
  ExpectSameAsLoop(0, 3e7, 2000000);              // sum passes 2^53
  ExpectSameAsLoop(std::ldexp(1.0, 60), 384, 100000);  // 1.5 grid steps: ties
  ExpectSameAsLoop(std::ldexp(1.0, 60) + 256, 128, 100000);  // exact half step
  ExpectSameAsLoop(std::ldexp(1.0, 60), 100, 100000);  // below half a step
  ExpectSameAsLoop(std::ldexp(1.0, 53) - 2, 1, 10);    // edge of exactness
  ExpectSameAsLoop(5, 7, 0);
  ExpectSameAsLoop(0.25, 0.125, 1000);  // below 1: one add at a time
}

TEST(LogHistogram, WeightedSampleEqualsRepeatedSamples) {
  std::mt19937_64 gen(11);
  LogHistogram one, weighted;
  for (int i = 0; i < 2000; ++i) {
    const int64_t v = static_cast<int64_t>(gen() % 60000000);
    const int64_t times = 1 + static_cast<int64_t>(gen() % 300);
    for (int64_t k = 0; k < times; ++k) one.Add(v);
    weighted.Add(v, times);
  }
  EXPECT_EQ(one.count(), weighted.count());
  EXPECT_EQ(one.min(), weighted.min());
  EXPECT_EQ(one.max(), weighted.max());
  EXPECT_EQ(Bits(one.mean()), Bits(weighted.mean()));
  EXPECT_EQ(Bits(one.stddev()), Bits(weighted.stddev()));
  for (double p : {0.0, 1.0, 50.0, 99.0, 99.9, 100.0}) {
    EXPECT_EQ(Bits(one.Percentile(p)), Bits(weighted.Percentile(p))) << p;
  }
}

}  // namespace
}  // namespace servesim
