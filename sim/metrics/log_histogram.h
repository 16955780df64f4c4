// Streaming log-bucketed histogram for per-token gaps (ITL), which are far
// too many to keep one by one. Bucket i holds values in
// [kMin * g^i, kMin * g^(i+1)) with g = 1.01, so a percentile read back is
// within 0.5% of the exact value. Mean, std, min and max are exact.
#pragma once

#include <cstdint>
#include <vector>

namespace servesim {

class LogHistogram {
 public:
  LogHistogram();
  void Add(double value);  // value > 0; values below kMin go to bucket 0
  void Merge(const LogHistogram& other);

  int64_t count() const { return count_; }
  double mean() const;
  double stddev() const;  // population standard deviation, as numpy's std
  double min() const { return min_; }
  double max() const { return max_; }
  // p in [0, 100]; numpy "linear" rank convention, resolved to a bucket's
  // geometric midpoint and clamped to [min, max]. 0 when empty.
  double Percentile(double p) const;

 private:
  static constexpr double kMin = 1e-3;  // in the caller's unit
  std::vector<int64_t> buckets_;
  int64_t count_ = 0;
  double sum_ = 0, sum_sq_ = 0;
  double min_ = 0, max_ = 0;
};

}  // namespace servesim
