// Streaming log-bucketed histogram (see log_histogram.h).
#include "sim/metrics/log_histogram.h"

#include <algorithm>
#include <cmath>

namespace servesim {
namespace {

constexpr double kGrowth = 1.01;
const double kLogGrowth = std::log(kGrowth);
constexpr int kNumBuckets = 4096;  // kMin * 1.01^4096 ~ 5e14: ample range

}  // namespace

LogHistogram::LogHistogram() : buckets_(kNumBuckets, 0) {}

void LogHistogram::Add(double value) {
  int idx = 0;
  if (value > kMin) {
    idx = std::min(kNumBuckets - 1,
                   static_cast<int>(std::log(value / kMin) / kLogGrowth));
  }
  ++buckets_[idx];
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += value;
  sum_sq_ += value * value;
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
      const double mid = kMin * std::pow(kGrowth, i + 0.5);
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

}  // namespace servesim
