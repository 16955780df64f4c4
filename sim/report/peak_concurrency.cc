// Peak concurrency (see peak_concurrency.h).
//
// Sorting the finish times (1 M radix-sorted 64-bit times) cost more than
// the rest of the count. Only how many finishes precede each send matters,
// and sends come in id order, which is send order: the finishes are
// bucketed by time (one counting pass, one scatter, buckets of 2^shift ns
// with about one finish each), and a bucket is sorted only when a send
// falls in it, by its few 32-bit offsets.
#include "sim/report/peak_concurrency.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/metrics/stats.h"

namespace servesim {

int64_t PeakConcurrencyBySorting(const OutcomeTable& done) {
  const size_t n = done.size();
  std::vector<SimTime> sends(n), finishes(n);
  for (size_t i = 0; i < n; ++i) {
    const RequestOutcome o = done[i];
    sends[i] = o.send;
    finishes[i] = o.finish;
  }
  SortTimes(sends);
  SortTimes(finishes);
  int64_t now = 0, peak = 0;
  size_t j = 0;
  for (size_t i = 0; i < n; ++i) {
    while (j < n && finishes[j] <= sends[i]) ++j, --now;
    peak = std::max(peak, ++now);
  }
  return peak;
}

int64_t PeakConcurrency(const OutcomeTable& done) {
  const size_t n = done.size();
  if (n == 0) return 0;
  // Sends in order? Then [lo, hi] spans sends and finishes.
  if (!done.sends_in_order()) return PeakConcurrencyBySorting(done);
  const SimTime lo = std::min(done[0].send, done.min_finish());
  const SimTime hi = std::max(done[n - 1].send, done.max_finish());
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  int shift = 0;  // at most n buckets
  while (shift < 63 && (range >> shift) >= n) ++shift;
  if (shift > 32) return PeakConcurrencyBySorting(done);  // offsets fit 32 bits
  const size_t buckets = static_cast<size_t>(range >> shift) + 1;
  const uint64_t base = static_cast<uint64_t>(lo), mask = (uint64_t{1} << shift) - 1;
  auto bucket = [&](SimTime t) {
    return static_cast<size_t>((static_cast<uint64_t>(t) - base) >> shift);
  };
  auto offset = [&](SimTime t) {
    return static_cast<uint32_t>((static_cast<uint64_t>(t) - base) & mask);
  };
  // pos[b]: finishes in buckets before b; after the scatter, through b.
  std::vector<uint32_t> pos(buckets + 1, 0);
  done.ForEachChunk([&](const OutcomeTable::Chunk& c, size_t m) {
    for (size_t j = 0; j < m; ++j) ++pos[bucket(c.finish[j]) + 1];
  });
  for (size_t b = 1; b <= buckets; ++b) pos[b] += pos[b - 1];
  // Padded: the sweep reads kFew offsets from a bucket's start.
  constexpr size_t kFew = 4;
  const auto fin = std::make_unique_for_overwrite<uint32_t[]>(n + kFew);
  std::fill(fin.get() + n, fin.get() + n + kFew, 0);
  done.ForEachChunk([&](const OutcomeTable::Chunk& c, size_t m) {
    for (size_t j = 0; j < m; ++j) {
      const SimTime f = c.finish[j];
      fin[pos[bucket(f)]++] = offset(f);
    }
  });
  // Finishes <= a send: those of the buckets before its own, and those of
  // its own bucket at or before its offset: counted without branches in a
  // bucket of at most kFew, else by binary search (the bucket sorted once:
  // sends' buckets only grow).
  int64_t peak = 0;
  size_t sorted_bucket = buckets;
  for (size_t i = 0; i < n; ++i) {
    const SimTime t = done.chunk(i >> OutcomeTable::kShift).send[i & (OutcomeTable::kChunk - 1)];
    const size_t b = bucket(t);
    const uint32_t off = offset(t);
    const size_t begin = b == 0 ? 0 : pos[b - 1], end = pos[b];
    size_t j = begin;
    if (end - begin <= kFew) {
      for (size_t k = 0; k < kFew; ++k) j += (begin + k < end) & (fin[begin + k] <= off);
    } else {
      if (sorted_bucket != b) std::sort(fin.get() + begin, fin.get() + end);
      sorted_bucket = b;
      j = std::upper_bound(fin.get() + begin, fin.get() + end, off) - fin.get();
    }
    peak = std::max(peak, static_cast<int64_t>(i + 1 - j));
  }
  return peak;
}

}  // namespace servesim
