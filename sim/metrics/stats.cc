// Exact sample statistics (see stats.h).
#include "sim/metrics/stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/core/time.h"
#include "sim/metrics/radix_sort.h"

namespace servesim {
namespace {

// Samples of 4096 values or more are radix-sorted (sim/metrics/radix_sort.h)
// by a key that orders as the value, offset by the smallest key so that
// only the bits in which keys differ cost passes.
uint64_t OrderKey(double x) {
  const uint64_t b = std::bit_cast<uint64_t>(x);
  return (b >> 63) ? ~b : b | (uint64_t{1} << 63);
}

uint64_t OrderKey(int64_t x) {
  return static_cast<uint64_t>(x) ^ (uint64_t{1} << 63);
}

constexpr size_t kRadixFrom = 4096;

template <typename T>
void RadixSort(std::vector<T>& v, size_t max_run) {
  uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
  for (const T x : v) {
    const uint64_t k = OrderKey(x);
    lo = std::min(lo, k);
    hi = std::max(hi, k);
  }
  RadixSortBy(v.data(), v.size(), std::bit_width(hi - lo), max_run,
              [lo](T x) { return OrderKey(x) - lo; });
}

// numpy's "linear" percentile of the sorted sample at(0) <= ... <= at(n-1).
template <typename At>
double PercentileAt(size_t n, const At& at, double p) {
  if (n == 0) return 0.0;
  const double rank = p / 100.0 * static_cast<double>(n - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, n - 1);
  const double frac = rank - static_cast<double>(lo);
  return at(lo) + (at(hi) - at(lo)) * frac;
}

// The statistics of a sorted sample (the mean summed in sorted order).
template <typename At>
SampleStats StatsOfSorted(size_t n, const At& at, const std::vector<double>& percentiles) {
  SampleStats s;
  s.count = static_cast<int64_t>(n);
  for (double p : percentiles) s.percentiles.emplace_back(p, 0.0);
  if (n == 0) return s;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += at(i);
  s.mean = sum / n;
  double sq = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = at(i);
    sq += (v - s.mean) * (v - s.mean);
  }
  s.stddev = std::sqrt(sq / n);
  s.median = PercentileAt(n, at, 50);
  s.min = at(0);
  s.max = at(n - 1);
  for (auto& [p, v] : s.percentiles) v = PercentileAt(n, at, p);
  return s;
}

}  // namespace

// NaN and -0.0 (whose place std::sort leaves open, so the sequence is not
// unique) go to std::sort.
void SortSample(std::vector<double>& v, size_t max_run) {
  const bool plain = std::any_of(v.begin(), v.end(), [](double x) {
    return std::isnan(x) || std::bit_cast<uint64_t>(x) == (uint64_t{1} << 63);
  });
  if (plain || v.size() < kRadixFrom) {
    std::sort(v.begin(), v.end());
  } else {
    RadixSort(v, max_run);
  }
}

void SortTimes(std::vector<int64_t>& v, size_t max_run) {
  if (v.size() < kRadixFrom) {
    std::sort(v.begin(), v.end());
  } else {
    RadixSort(v, max_run);
  }
}

double PercentileOfSorted(const std::vector<double>& sorted, double p) {
  return PercentileAt(sorted.size(), [&](size_t i) { return sorted[i]; }, p);
}

SampleStats Summarize(std::vector<double>& values,
                      const std::vector<double>& percentiles) {
  SortSample(values, kMaxSortRun);
  return StatsOfSorted(values.size(), [&](size_t i) { return values[i]; }, percentiles);
}

SampleStats SummarizeMillis(std::vector<int64_t>& ns,
                            const std::vector<double>& percentiles) {
  SortTimes(ns, kMaxSortRun);
  return StatsOfSorted(ns.size(), [&](size_t i) { return ToMillis(ns[i]); }, percentiles);
}

SampleStats SummarizeNonNegative(std::vector<int64_t>& bits,
                                 const std::vector<double>& percentiles) {
  SortTimes(bits, kMaxSortRun);
  return StatsOfSorted(
      bits.size(), [&](size_t i) { return std::bit_cast<double>(bits[i]); }, percentiles);
}

}  // namespace servesim
