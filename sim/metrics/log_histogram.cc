// Streaming log-linear histogram (see log_histogram.h).
#include "sim/metrics/log_histogram.h"

#include <algorithm>
#include <cmath>

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
  const auto x = static_cast<unsigned __int128>(value);
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
  const auto x = static_cast<unsigned __int128>(value);
  const auto n = static_cast<unsigned __int128>(times);
  sum_ += x * n;
  sum_sq_ += x * x * n;
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

double LogHistogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / count_);
}

double LogHistogram::stddev() const {
  if (count_ == 0) return 0.0;
  // n * sum_sq - sum^2 (>= 0) exactly while it fits in 128 bits, i.e.
  // unless there are ~10^14 samples of ~1 s gaps; else in long double.
  const auto n = static_cast<unsigned __int128>(count_);
  const long double n2 = static_cast<long double>(count_) * count_;
  constexpr unsigned __int128 kMax = ~static_cast<unsigned __int128>(0);
  if (sum_sq_ <= kMax / n) {
    const unsigned __int128 a = n * sum_sq_, b = sum_ * sum_;
    // sum^2 <= n * sum_sq (Cauchy-Schwarz).
    return static_cast<double>(std::sqrt(static_cast<long double>(a - b) / n2));
  }
  const long double m = static_cast<long double>(sum_) / count_;
  const long double v = static_cast<long double>(sum_sq_) / count_ - m * m;
  return static_cast<double>(std::sqrt(std::max(0.0L, v)));
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

SampleStats SummarizeHistogram(const LogHistogram& h, const std::vector<double>& ps,
                               double scale) {
  SampleStats s;
  s.count = h.count();
  s.mean = h.mean() * scale;
  s.stddev = h.stddev() * scale;
  s.median = h.Percentile(50) * scale;
  s.min = static_cast<double>(h.min()) * scale;
  s.max = static_cast<double>(h.max()) * scale;
  for (double p : ps) s.percentiles.emplace_back(p, h.Percentile(p) * scale);
  return s;
}

}  // namespace servesim
