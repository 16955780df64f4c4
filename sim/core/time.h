// Simulated time: integer nanoseconds, so event order never depends on
// floating-point rounding and runs are bit-for-bit reproducible.
#pragma once

#include <cmath>
#include <cstdint>

namespace servesim {

using SimTime = int64_t;  // nanoseconds since the start of the run

inline constexpr SimTime kNanosPerSecond = 1'000'000'000;
inline constexpr SimTime kNever = INT64_MAX;

inline SimTime FromSeconds(double seconds) {
  return static_cast<SimTime>(std::llround(seconds * 1e9));
}
inline double ToSeconds(SimTime t) { return static_cast<double>(t) * 1e-9; }
inline double ToMillis(SimTime t) { return static_cast<double>(t) * 1e-6; }

}  // namespace servesim
