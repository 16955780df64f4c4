// PeakConcurrency (bucketed finishes) against the plain count: at each
// send instant, the requests sent by then minus those finished by then.
#include "sim/report/peak_concurrency.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim/core/rng.h"

namespace servesim {
namespace {

int64_t Plain(const std::vector<RequestOutcome>& v) {
  int64_t peak = 0;
  for (const RequestOutcome& a : v) {
    int64_t now = 0;
    for (const RequestOutcome& b : v) now += (b.send <= a.send) - (b.finish <= a.send);
    peak = std::max(peak, now);
  }
  return peak;
}

OutcomeTable Chunked(const std::vector<RequestOutcome>& v) {
  OutcomeTable c;
  for (const RequestOutcome& o : v) c.push_back(o);
  return c;
}

// Sends in order (ties, finishes on other requests' sends, crowded and
// empty buckets, a range too wide for 32-bit offsets) and out of order.
TEST(PeakConcurrency, EqualsPlainCount) {
  Rng rng(5, "peak");
  for (int kind = 0; kind < 7; ++kind) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{300}, size_t{2000}}) {
      std::vector<RequestOutcome> v;
      SimTime t = 1000;
      for (size_t i = 0; i < n; ++i) {
        const double u = rng.Uniform();
        RequestOutcome o{};
        switch (kind) {
          case 0: t += static_cast<SimTime>(u * 100); break;           // ties
          case 1: t += static_cast<SimTime>(u * 1e9); break;
          case 2: t += i % 50 == 0 ? 1'000'000'000'000 : 3; break;  // wide range
          default: t += static_cast<SimTime>(u * 10); break;
        }
        o.send = t;
        switch (kind) {
          case 3: o.finish = t + 500; break;                    // one crowded instant apart
          case 4: o.finish = 5000 + static_cast<SimTime>(u * 3) * 10; break;  // crowded buckets
          case 5: o.finish = t + static_cast<SimTime>(rng.Uniform() * 40); break;
          default: o.finish = t + static_cast<SimTime>(rng.Uniform() * (kind == 1 ? 3e10 : 400));
        }
        v.push_back(o);
      }
      if (kind == 6) std::reverse(v.begin(), v.end());  // sends out of order
      // Finishes at other requests' send instants.
      for (size_t i = 0; i + 3 < v.size(); i += 5) v[i].finish = v[i + 3].send;
      const OutcomeTable c = Chunked(v);
      const int64_t want = Plain(v);
      EXPECT_EQ(PeakConcurrency(c), want) << "kind " << kind << " n " << n;
      EXPECT_EQ(PeakConcurrencyBySorting(c), want) << "kind " << kind << " n " << n;
    }
  }
}

// More requests than one OutcomeTable chunk holds (the count reads the
// chunks' columns and indexes sends across them), against the same count
// by binary search in sorted copies (the quadratic one is too slow here).
TEST(PeakConcurrency, SpansOutcomeChunks) {
  Rng rng(9, "peak-chunks");
  const size_t n = OutcomeTable::kChunk + OutcomeTable::kChunk / 3;
  for (const bool reversed : {false, true}) {
    std::vector<RequestOutcome> v;
    SimTime t = 1000;
    for (size_t i = 0; i < n; ++i) {
      t += static_cast<SimTime>(rng.Uniform() * 1e6);
      RequestOutcome o{};
      o.send = t;
      o.finish = t + static_cast<SimTime>(rng.Uniform() * 3e8);
      v.push_back(o);
    }
    if (reversed) std::reverse(v.begin(), v.end());
    std::vector<SimTime> sends, finishes;
    for (const RequestOutcome& o : v) {
      sends.push_back(o.send);
      finishes.push_back(o.finish);
    }
    std::sort(sends.begin(), sends.end());
    std::sort(finishes.begin(), finishes.end());
    int64_t want = 0;
    for (const SimTime s : sends) {
      const auto sent = std::upper_bound(sends.begin(), sends.end(), s) - sends.begin();
      const auto done = std::upper_bound(finishes.begin(), finishes.end(), s) - finishes.begin();
      want = std::max<int64_t>(want, sent - done);
    }
    ASSERT_GT(want, 100);  // a real overlap, not a trivial count
    const OutcomeTable c = Chunked(v);
    ASSERT_EQ(c.num_chunks(), 2u);
    EXPECT_EQ(PeakConcurrency(c), want) << "reversed " << reversed;
  }
}

}  // namespace
}  // namespace servesim
