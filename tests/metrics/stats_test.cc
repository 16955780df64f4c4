// Percentiles: numpy "linear" convention exactly; the streaming histogram
// within its 0.5% resolution of the exact value.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>
#include <vector>

#include "sim/core/rng.h"
#include "sim/core/time.h"
#include "sim/metrics/log_histogram.h"
#include "sim/metrics/stats.h"

namespace servesim {
namespace {

TEST(Stats, MatchesNumpyLinearPercentiles) {
  // numpy.percentile([1, 2, 3, 4], [50, 90, 99]) = [2.5, 3.7, 3.97]
  std::vector<double> v = {4, 1, 3, 2};
  SampleStats s = Summarize(v, {50, 90, 99});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_NEAR(s.percentiles[1].second, 3.7, 1e-12);
  EXPECT_NEAR(s.percentiles[2].second, 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, std::sqrt(1.25), 1e-12);  // numpy std (ddof=0)
}

// Summarize sorts samples of 4096 to 4M values with a radix sort: the
// same sorted sample (so the same sum, in the same order) as std::sort, on
// latency-like values, negatives, ties, a narrow range, one huge outlier,
// all equal, and a -0.0 (std::sort's path).
TEST(Stats, RadixSortedSamplesEqualStdSort) {
  Rng rng(11, "sort");
  for (int kind = 0; kind < 7; ++kind) {
    std::vector<double> v;
    for (int i = 0; i < 50000; ++i) {
      const double z = rng.StandardNormal();
      switch (kind) {
        case 0: v.push_back(std::exp(4 + 1.5 * z)); break;
        case 1: v.push_back(z * 1e3); break;
        case 2: v.push_back(std::round(z * 4)); break;
        case 3: v.push_back(100 + z * 1e-9); break;
        case 4: v.push_back(i == 7 ? 1e300 : std::abs(z)); break;
        case 5: v.push_back(2.5); break;
        case 6: v.push_back(i == 3 ? -0.0 : z); break;
      }
    }
    std::vector<double> expected = v;
    std::sort(expected.begin(), expected.end());
    const SampleStats s = Summarize(v, {50, 99});
    ASSERT_EQ(v.size(), expected.size());
    for (size_t i = 0; i < v.size(); ++i) {
      ASSERT_EQ(v[i], expected[i]) << "kind " << kind << " at " << i;
    }
    double sum = 0;
    for (double x : expected) sum += x;
    EXPECT_EQ(s.mean, sum / expected.size()) << "kind " << kind;
  }
}

TEST(Stats, RadixSortedRunsMergedEqualStdSort) {
  // Samples longer than a run: sorted in runs, merged one by one (runs of
  // 10,000 here stand for the 4M of a real summary).
  Rng rng(12, "sort runs");
  for (size_t n : {size_t{4096}, size_t{10001}, size_t{47113}}) {
    std::vector<double> v;
    std::vector<int64_t> t;
    for (size_t i = 0; i < n; ++i) {
      const double z = rng.StandardNormal();
      // (+ 0.0: no -0.0, which would go to std::sort.)
      v.push_back(i % 5 == 0 ? std::round(z * 3) + 0.0 : std::exp(4 + 1.5 * z) - 50);
      t.push_back(std::llround(z * 1e12) * (i % 3 == 0 ? 1 : -1));
    }
    std::vector<double> ev = v;
    std::vector<int64_t> et = t;
    std::sort(ev.begin(), ev.end());
    std::sort(et.begin(), et.end());
    SortSample(v, 10000);
    SortTimes(t, 10000);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::bit_cast<uint64_t>(v[i]), std::bit_cast<uint64_t>(ev[i]))
          << n << " at " << i;
      ASSERT_EQ(t[i], et[i]) << n << " at " << i;
    }
  }
}

// The summary's integer paths against Summarize: durations in ns
// (SummarizeMillis) and non-negative doubles by their bits
// (SummarizeNonNegative), which select the ranks they read rather than
// sort, give its order statistics to the bit, and a mean and standard
// deviation (from exact sums; in long double) within 1e-12 and 1e-9
// relative of its sorted-order sums. Below and above the selection's and
// the radix sort's thresholds, with ties, narrow and wide ranges (keys
// over 32 bits: sorted by their top bits, then runs of equal top bits;
// offsets past 2^40 ns: sums in long double), values piled in one bucket
// (selection falls back to a sort).
TEST(Stats, IntegerPathsEqualSummarize) {
  Rng rng(13, "int paths");
  const std::vector<double> ps = {1, 50, 90, 99, 99.9};
  auto same_order = [](const SampleStats& a, const SampleStats& b) {
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.median, b.median);
    EXPECT_EQ(a.min, b.min);
    EXPECT_EQ(a.max, b.max);
    EXPECT_EQ(a.percentiles, b.percentiles);
  };
  auto close = [&](const SampleStats& a, const SampleStats& b) {
    same_order(a, b);
    EXPECT_NEAR(a.mean, b.mean, 1e-12 * std::abs(b.mean) + 1e-300);
    EXPECT_NEAR(a.stddev, b.stddev, 1e-9 * std::abs(b.stddev) + 1e-300);
  };
  for (int kind = 0; kind < 7; ++kind) {
    for (size_t n : {size_t{1}, size_t{100}, size_t{5000}, size_t{60000}}) {
      std::vector<int64_t> ns;
      for (size_t i = 0; i < n; ++i) {
        const double z = rng.StandardNormal();
        switch (kind) {
          case 0: ns.push_back(std::llround(std::exp(17 + 1.2 * z))); break;  // 32 bits
          case 1: ns.push_back(std::llround(std::exp(22 + 2 * z))); break;    // wider
          case 2: ns.push_back(std::llround(std::abs(z) * 4)); break;         // ties
          case 3: ns.push_back(i % 7 ? 5 : 5'000'000'000'000); break;
          case 4: ns.push_back(std::llround(z * 1e6)); break;  // negatives
          case 5: ns.push_back(i == 0 ? 4'000'000'000'000 : std::llround(std::exp(10 + z))); break;
          case 6: ns.push_back(std::llround(std::exp(17 + 1.2 * z)) + (i % 3 ? 0 : 1'500'000'000'000)); break;
        }
      }
      std::vector<double> ms, tpot;
      std::vector<int64_t> bits;
      for (size_t i = 0; i < n; ++i) {
        ms.push_back(ToMillis(ns[i]));
        if (ns[i] >= 0) {
          tpot.push_back(ToMillis(ns[i]) / static_cast<double>(1 + i % 300));
          bits.push_back(std::bit_cast<int64_t>(tpot.back()));
        }
      }
      close(SummarizeMillis(ns, ps), Summarize(ms, ps));
      close(SummarizeNonNegative(bits, ps), Summarize(tpot, ps));
    }
  }
}

TEST(LogHistogram, PercentilesWithinPointFourPercentOfExact) {
  Rng rng(3, "hist");
  LogHistogram h;
  std::vector<double> exact;
  for (int i = 0; i < 200000; ++i) {
    // Gaps in ns, log-normal around 7 ms.
    const int64_t x = std::llround(std::exp(15.8 + 1.2 * rng.StandardNormal()));
    h.Add(x);
    exact.push_back(static_cast<double>(x));
  }
  SampleStats s = Summarize(exact, {10, 50, 90, 99, 99.9});
  for (const auto& [p, v] : s.percentiles) {
    EXPECT_NEAR(h.Percentile(p), v, 0.004 * v) << "p" << p;
  }
  EXPECT_NEAR(h.mean(), s.mean, 1e-9 * s.mean);
  EXPECT_NEAR(h.stddev(), s.stddev, 1e-6 * s.stddev);
}

TEST(LogHistogram, SmallValuesAreExact) {
  LogHistogram h;
  for (int v = 0; v < 128; ++v) h.Add(v);
  EXPECT_DOUBLE_EQ(h.Percentile(0), 0);
  EXPECT_DOUBLE_EQ(h.Percentile(100), 127);
  EXPECT_DOUBLE_EQ(h.Percentile(50), 63);  // rank 63.5 -> bucket of 63
}

TEST(LogHistogram, MergeEqualsAddingAll) {
  LogHistogram a, b, all;
  for (int i = 1; i <= 1000; ++i) {
    (i % 2 ? a : b).Add(i * 37);
    all.Add(i * 37);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_DOUBLE_EQ(a.Percentile(99), all.Percentile(99));
  EXPECT_DOUBLE_EQ(a.min(), all.min());
  EXPECT_DOUBLE_EQ(a.max(), all.max());
}

// The engine adds one weighted sample per step where the reference engine
// adds one value per token, in another order: mean and std must come out
// the same bits either way (exact integer sums).
TEST(LogHistogram, MeanAndStdDependOnlyOnTheMultisetOfValues) {
  std::vector<std::pair<int64_t, int64_t>> runs;  // (gap ns, tokens)
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 2000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    runs.push_back({static_cast<int64_t>(5'000'000 + x % 40'000'000),
                    static_cast<int64_t>(1 + (x >> 40) % 300)});
  }
  LogHistogram weighted, one_by_one;
  for (const auto& [gap, n] : runs) weighted.Add(gap, n);
  for (size_t i = runs.size(); i-- > 0;) {
    for (int64_t k = 0; k < runs[i].second; ++k) one_by_one.Add(runs[i].first);
  }
  EXPECT_EQ(weighted.count(), one_by_one.count());
  EXPECT_EQ(weighted.mean(), one_by_one.mean());
  EXPECT_EQ(weighted.stddev(), one_by_one.stddev());
  EXPECT_EQ(weighted.Percentile(99), one_by_one.Percentile(99));
  // Exact where a double sum of squares would not be: values near 1e12
  // whose squares (1e24) lose their low digits as doubles.
  LogHistogram big;
  big.Add(1'000'000'000'000);
  big.Add(1'000'000'000'001, 2);
  big.Add(1'000'000'000'002);
  EXPECT_EQ(big.mean(), 1'000'000'000'001.0);
  EXPECT_DOUBLE_EQ(big.stddev(), std::sqrt(0.5));  // deviations -1, 0, 0, 1
}

}  // namespace
}  // namespace servesim
