// MSER-5 warm-up truncation on series with a known transient.
#include "sim/analysis/steady_state.h"

#include <gtest/gtest.h>

#include "sim/core/rng.h"

namespace servesim {
namespace {

std::vector<double> Noise(int n, uint64_t seed) {
  Rng rng(seed, "mser");
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) xs.push_back(1 + 0.1 * rng.StandardNormal());
  return xs;
}

TEST(Mser5, CutsAnInitialTransient) {
  // 200 observations decaying from 10 to the steady level 1, then noise.
  std::vector<double> xs = Noise(5000, 1);
  for (int i = 0; i < 200; ++i) xs[i] += 9 * (1 - i / 200.0);
  const Mser5Result r = Mser5(xs);
  EXPECT_TRUE(r.settled);
  EXPECT_GE(r.truncate, 150);
  EXPECT_LE(r.truncate, 300);
  EXPECT_EQ(r.truncate % 5, 0);
}

TEST(Mser5, KeepsAStationarySeries) {
  const Mser5Result r = Mser5(Noise(5000, 2));
  EXPECT_TRUE(r.settled);
  EXPECT_LT(r.truncate, 500);  // a stationary series loses little
}

TEST(Mser5, FlagsASeriesThatNeverSettles) {
  // A queue that keeps growing: the best cut is as late as allowed.
  std::vector<double> xs;
  for (int i = 0; i < 5000; ++i) xs.push_back(i * 0.01);
  const Mser5Result r = Mser5(xs);
  EXPECT_FALSE(r.settled);
  EXPECT_EQ(r.truncate, 2500);
}

TEST(Mser5, TooShortToTell) {
  const Mser5Result r = Mser5({5, 4, 3, 2, 1, 1, 1});
  EXPECT_EQ(r.truncate, 0);
  EXPECT_TRUE(r.settled);
}

}  // namespace
}  // namespace servesim
