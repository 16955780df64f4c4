// Simulated time: integer nanoseconds, so event order never depends on
// floating-point rounding and runs are bit-for-bit reproducible.
#pragma once

#include <cmath>
#include <cstdint>

namespace servesim {

using SimTime = int64_t;  // nanoseconds since the start of the run

inline constexpr SimTime kNanosPerSecond = 1'000'000'000;
inline constexpr SimTime kNever = INT64_MAX;

// int64 nanoseconds overflow at 9.2e9 s (292 years). Configuration times are
// bounded far below that, so that sums of them never come near it:
// one interval (a think time, a mean inter-arrival gap, a cost-model
// constant) at most kMaxIntervalSeconds, 1e6 s (11.6 days); a span (a run's
// duration or warm-up, a trace replayed, num_requests / rate) at most
// kMaxSpanSeconds, 1e8 s (3.2 years), 1% of the range.
inline constexpr double kMaxIntervalSeconds = 1e6;
inline constexpr double kMaxSpanSeconds = 1e8;
// FromSeconds saturates here (2^62 ns, 146 years) rather than wrapping, and
// adding one more such time to any valid time cannot overflow.
inline constexpr SimTime kSaturatedTime = SimTime{1} << 62;

// std::llround(x) for every finite |x| < 2^63, without the libm call (about
// a third of its instructions, and inlined): t = trunc(x) is a double, so
// x - t, the fraction, is exact (its bits are x's own, below its unit
// bit); ties go away from zero as llround's do. Tests: Time.RoundHalfAway.
inline int64_t RoundHalfAway(double x) {
  const int64_t t = static_cast<int64_t>(x);
  const double f = x - static_cast<double>(t);
  return t + (f >= 0.5) - (f <= -0.5);
}

// Seconds to nanoseconds, rounded; beyond +-kSaturatedTime (or NaN) the
// result saturates, since converting an out-of-range double is undefined.
inline SimTime FromSeconds(double seconds) {
  constexpr double kLimit = static_cast<double>(kSaturatedTime) * 1e-9;
  if (seconds >= kLimit || std::isnan(seconds)) return kSaturatedTime;
  if (seconds <= -kLimit) return -kSaturatedTime;
  // |seconds * 1e9| < 2^62 (1 + 2^-51) here: RoundHalfAway is llround.
  return RoundHalfAway(seconds * 1e9);
}
inline double ToSeconds(SimTime t) { return static_cast<double>(t) * 1e-9; }
inline double ToMillis(SimTime t) { return static_cast<double>(t) * 1e-6; }

}  // namespace servesim
