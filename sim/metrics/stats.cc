// Exact sample statistics (see stats.h).
#include "sim/metrics/stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>

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

// The ranks numpy's "linear" percentile p of n > 0 sorted values reads,
// and the weight of the upper one.
struct PercentileRanks {
  size_t lo, hi;
  double frac;
};
PercentileRanks RanksOf(size_t n, double p) {
  const double rank = p / 100.0 * static_cast<double>(n - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  return {lo, std::min(lo + 1, n - 1), rank - static_cast<double>(lo)};
}

// numpy's "linear" percentile of the sorted sample at(0) <= ... <= at(n-1).
template <typename At>
double PercentileAt(size_t n, const At& at, double p) {
  if (n == 0) return 0.0;
  const PercentileRanks r = RanksOf(n, p);
  return at(r.lo) + (at(r.hi) - at(r.lo)) * r.frac;
}

// n values' stats with the percentile set named, every value 0 (filled in
// by the caller; what an empty sample reports).
SampleStats EmptyStats(size_t n, const std::vector<double>& percentiles) {
  SampleStats s;
  s.count = static_cast<int64_t>(n);
  for (double p : percentiles) s.percentiles.emplace_back(p, 0.0);
  return s;
}

// The statistics of a sorted sample (the mean summed in sorted order).
template <typename At>
SampleStats StatsOfSorted(size_t n, const At& at, const std::vector<double>& percentiles) {
  SampleStats s = EmptyStats(n, percentiles);
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

namespace {

// The values of v at `ranks` (ascending, unique, each < v.size()) in the
// order std::sort would give v, without sorting v: the values are counted
// in 2^16 buckets of equal width from the smallest, and only the buckets
// that hold a wanted rank are gathered and sorted (a dozen ranks of a
// million latencies touch a few thousand values). When those buckets hold
// a large part of v (values piled in a few buckets) v is sorted instead.
std::vector<int64_t> SelectRanks(std::vector<int64_t>& v, const std::vector<size_t>& ranks,
                                 int64_t lo, int64_t hi) {
  const size_t n = v.size();
  std::vector<int64_t> out(ranks.size());
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (range == 0) {
    std::fill(out.begin(), out.end(), lo);
    return out;
  }
  const int shift = std::max(0, static_cast<int>(std::bit_width(range)) - 16);
  const auto bucket = [&](int64_t x) {
    return static_cast<size_t>((static_cast<uint64_t>(x) - static_cast<uint64_t>(lo)) >> shift);
  };
  const auto sorted_all = [&] {
    SortTimes(v, kMaxSortRun);
    for (size_t k = 0; k < ranks.size(); ++k) out[k] = v[ranks[k]];
    return out;
  };
  // (Small samples: std::sort's, cheap. Counts are 32-bit.)
  if (n < kRadixFrom || n >= (uint64_t{1} << 32)) return sorted_all();
  std::vector<uint32_t> count((range >> shift) + 1, 0);  // at most 2^16
  for (const int64_t x : v) ++count[bucket(x)];
  // Each wanted rank's bucket, and its place among the bucket's values.
  struct Wanted {
    size_t bucket, first;  // the values before the bucket's
  };
  std::vector<Wanted> wanted;  // one per distinct bucket, ascending
  std::vector<size_t> rank_bucket(ranks.size());
  size_t before = 0, b = 0, gathered = 0;
  for (size_t k = 0; k < ranks.size(); ++k) {
    while (before + count[b] <= ranks[k]) before += count[b++];
    if (wanted.empty() || wanted.back().bucket != b) {
      wanted.push_back({b, before});
      gathered += count[b];
    }
    rank_bucket[k] = wanted.size() - 1;
  }
  if (gathered > n / 8) return sorted_all();
  // Gather: each wanted bucket's values, side by side.
  std::vector<uint32_t> slot(count.size(), 0);  // 0: not wanted, else 1 + index
  std::vector<size_t> start(wanted.size() + 1, 0), fill(wanted.size());
  for (size_t w = 0; w < wanted.size(); ++w) {
    slot[wanted[w].bucket] = static_cast<uint32_t>(w + 1);
    start[w + 1] = start[w] + count[wanted[w].bucket];
    fill[w] = start[w];
  }
  std::vector<int64_t> values(gathered);
  for (const int64_t x : v) {
    const uint32_t s = slot[bucket(x)];
    if (s != 0) values[fill[s - 1]++] = x;
  }
  for (size_t w = 0; w < wanted.size(); ++w) {
    std::sort(values.begin() + static_cast<ptrdiff_t>(start[w]),
              values.begin() + static_cast<ptrdiff_t>(start[w + 1]));
  }
  for (size_t k = 0; k < ranks.size(); ++k) {
    const size_t w = rank_bucket[k];
    out[k] = values[start[w] + (ranks[k] - wanted[w].first)];
  }
  return out;
}

// The median, extremes and percentiles of v (integers ordered as the
// values they stand for, `value` of each; smallest lo, largest hi) into s,
// from the few ranks they read (numpy's "linear": the values at
// floor(rank) and the next).
template <typename Value>
void OrderStats(std::vector<int64_t>& v, int64_t lo, int64_t hi, Value value, SampleStats* s) {
  const size_t n = v.size();
  std::vector<size_t> ranks = {0, n - 1};
  const auto add_ranks = [&](double p) {
    const PercentileRanks r = RanksOf(n, p);
    ranks.push_back(r.lo);
    ranks.push_back(r.hi);
  };
  add_ranks(50);
  for (const auto& [p, unused] : s->percentiles) add_ranks(p);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const std::vector<int64_t> at_ranks = SelectRanks(v, ranks, lo, hi);
  const auto at = [&](size_t i) {
    const auto k = std::lower_bound(ranks.begin(), ranks.end(), i) - ranks.begin();
    return value(at_ranks[static_cast<size_t>(k)]);
  };
  s->median = PercentileAt(n, at, 50);
  s->min = value(lo);
  s->max = value(hi);
  for (auto& [p, x] : s->percentiles) x = PercentileAt(n, at, p);
}

// The smallest and largest of v (not empty). A plain loop the compiler
// turns into conditional moves: std::minmax_element compares the values
// pairwise first, a branch that latencies in random order mispredict half
// the time (1.4% of a 1M-request run).
std::pair<int64_t, int64_t> MinMax(const std::vector<int64_t>& v) {
  int64_t lo = v.front(), hi = v.front();
  for (const int64_t x : v) {
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  return {lo, hi};
}

// The mean and population variance of value(x) over v (not empty), in
// long double, two passes in v's order.
template <typename Value>
std::pair<long double, long double> MeanVariance(const std::vector<int64_t>& v, Value value) {
  const long double n = static_cast<long double>(v.size());
  long double sum = 0, sq = 0;
  for (const int64_t x : v) sum += value(x);
  const long double mean = sum / n;
  for (const int64_t x : v) {
    const long double d = value(x) - mean;
    sq += d * d;
  }
  return {mean, sq / n};
}

}  // namespace

SampleStats SummarizeMillis(std::vector<int64_t>& ns,
                            const std::vector<double>& percentiles) {
  SampleStats s = EmptyStats(ns.size(), percentiles);
  const size_t n = ns.size();
  if (n == 0) return s;
  const auto [lo, hi] = MinMax(ns);
  // Mean and variance from exact sums of the offsets from the smallest
  // (squares summed exactly while they cannot overflow: offsets below 2^40
  // ns, 18 minutes, and fewer than 2^40 values; else in long double).
  // (A copy of lo: clang 14 cannot capture a structured binding.)
  const auto offset = [base = lo](int64_t x) {
    return static_cast<uint64_t>(x) - static_cast<uint64_t>(base);
  };
  long double mean_off, var;
  if (offset(hi) < (uint64_t{1} << 40) && n < (uint64_t{1} << 40)) {
    unsigned __int128 sum = 0, squares = 0;
    for (const int64_t x : ns) {
      const uint64_t y = offset(x);
      sum += y;
      squares += static_cast<unsigned __int128>(y) * y;
    }
    const long double count = static_cast<long double>(n);
    mean_off = static_cast<long double>(sum) / count;
    var = static_cast<long double>(squares) / count - mean_off * mean_off;
  } else {
    std::tie(mean_off, var) =
        MeanVariance(ns, [&](int64_t x) { return static_cast<long double>(offset(x)); });
  }
  s.mean = static_cast<double>((static_cast<long double>(lo) + mean_off) * 1e-6L);
  s.stddev = static_cast<double>(std::sqrt(std::max(var, 0.0L)) * 1e-6L);
  OrderStats(ns, lo, hi, [](int64_t x) { return ToMillis(x); }, &s);
  return s;
}

SampleStats SummarizeNonNegative(std::vector<int64_t>& bits,
                                 const std::vector<double>& percentiles) {
  SampleStats s = EmptyStats(bits.size(), percentiles);
  if (bits.empty()) return s;
  // Non-negative doubles' bits order as the values do. Mean and variance
  // in long double (within an ulp or two of Summarize's sorted-order sums).
  const auto value = [](int64_t b) { return std::bit_cast<double>(b); };
  const auto [mean, var] =
      MeanVariance(bits, [&](int64_t b) { return static_cast<long double>(value(b)); });
  s.mean = static_cast<double>(mean);
  s.stddev = static_cast<double>(std::sqrt(var));
  const auto [lo, hi] = MinMax(bits);
  OrderStats(bits, lo, hi, value, &s);
  return s;
}

}  // namespace servesim
