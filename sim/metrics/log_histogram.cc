// Streaming log-linear histogram (see log_histogram.h).
#include "sim/metrics/log_histogram.h"

#include <algorithm>
#include <cmath>

#include "sim/metrics/repeated_sum.h"

namespace servesim {
namespace {

constexpr int kSub = 1 << 7;
constexpr int kNumBuckets = (64 - 7 + 1) * kSub;

}  // namespace

LogHistogram::LogHistogram() : buckets_(kNumBuckets, 0) {}

int LogHistogram::BucketOf(int64_t v) {
  if (v < kSub) return static_cast<int>(std::max<int64_t>(v, 0));
  const int msb = 63 - __builtin_clzll(static_cast<uint64_t>(v));
  const int shift = msb - kSubBits;
  return ((shift + 1) << kSubBits) + static_cast<int>((v >> shift) - kSub);
}

double LogHistogram::BucketMid(int b) {
  if (b < kSub) return b;
  const int shift = (b >> kSubBits) - 1;
  const double lo = std::ldexp(static_cast<double>(kSub + (b & (kSub - 1))), shift);
  const double width = std::ldexp(1.0, shift);
  return lo + (width - 1) / 2;  // integers lo .. lo + width - 1
}

void LogHistogram::Add(int64_t value) {
  ++buckets_[BucketOf(value)];
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  const double x = static_cast<double>(value);
  sum_ += x;
  sum_sq_ += x * x;
}

void LogHistogram::Add(int64_t value, int64_t times) {
  if (times == 1) return Add(value);
  buckets_[BucketOf(value)] += times;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += times;
  const double x = static_cast<double>(value);
  sum_ = RepeatedSum(sum_, x, times);
  sum_sq_ = RepeatedSum(sum_sq_, x * x, times);
}

void LogHistogram::Merge(const LogHistogram& other) {
  if (other.count_ == 0) return;
  for (int i = 0; i < kNumBuckets; ++i) buckets_[i] += other.buckets_[i];
  min_ = count_ ? std::min(min_, other.min_) : other.min_;
  max_ = count_ ? std::max(max_, other.max_) : other.max_;
  count_ += other.count_;
  sum_ += other.sum_;
  sum_sq_ += other.sum_sq_;
}

double LogHistogram::mean() const { return count_ ? sum_ / count_ : 0.0; }

double LogHistogram::stddev() const {
  if (count_ == 0) return 0.0;
  const double m = mean();
  return std::sqrt(std::max(0.0, sum_sq_ / count_ - m * m));
}

double LogHistogram::Percentile(double p) const {
  if (count_ == 0) return 0.0;
  const double rank = p / 100.0 * static_cast<double>(count_ - 1);
  const int64_t target = static_cast<int64_t>(std::floor(rank));
  int64_t seen = 0;
  for (int i = 0; i < kNumBuckets; ++i) {
    seen += buckets_[i];
    if (seen > target) {
      return std::clamp(BucketMid(i), static_cast<double>(min_),
                        static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace servesim
