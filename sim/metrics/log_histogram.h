// Streaming log-linear histogram of non-negative integers (per-token gaps
// in nanoseconds, batch sizes), for quantities far too many to keep one by
// one. Values below 128 are exact; above, each power of two is split into
// 128 equal buckets, so a percentile read back (bucket midpoint) is within
// 0.4% of the exact value. Min and max are exact; the sum and the sum of
// squares are kept as exact integers (128-bit), so mean and std depend only
// on the multiset of values, never on the order they came in or on how they
// were grouped into weighted samples (the engine adds one weighted sample
// per step where the reference engine adds one value per token). Adding a
// value is a few integer operations: no logarithm on the per-token path.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/metrics/stats.h"

namespace servesim {

class LogHistogram {
 public:
  LogHistogram();
  void Add(int64_t value);  // value >= 0
  // `times` copies of value (>= 1) at once, in O(1): exactly what `times`
  // calls of Add give.
  void Add(int64_t value, int64_t times);
  void Merge(const LogHistogram& other);

  int64_t count() const { return count_; }
  // Rounded once from the exact sums (long double), so the same values
  // give the same bits whatever their order.
  double mean() const;
  double stddev() const;  // population standard deviation, as numpy's std
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  // p in [0, 100]; numpy "linear" rank convention resolved to the bucket
  // holding that rank, read at its midpoint and clamped to [min, max].
  // 0 when empty.
  double Percentile(double p) const;

 private:
  static constexpr int kSubBits = 7;
  static int BucketOf(int64_t value);
  static double BucketMid(int bucket);

  std::vector<int64_t> buckets_;
  int64_t count_ = 0;
  // Exact: a 10^12 ns gap squared is 10^24; 2^127 holds 10^14 of them.
  unsigned __int128 sum_ = 0, sum_sq_ = 0;
  int64_t min_ = 0, max_ = 0;
};

// The histogram's statistics, each value times `scale` (ns to ms: 1e-6);
// percentiles within the histogram's 0.4%, the rest exact.
SampleStats SummarizeHistogram(const LogHistogram& h, const std::vector<double>& ps,
                               double scale);

}  // namespace servesim
