// Internal to the length-distribution factory: the clamp every family shares
// and one maker per family. Code outside sim/workload calls
// MakeLengthDistribution() instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/core/json_view.h"
#include "sim/core/time.h"
#include "sim/workload/length_distribution.h"

namespace servesim {

// The optional "min"/"max" bounds of every family. Invariant: 1 <= min <= max,
// so every sample is a positive int32.
struct LengthClamp {
  static constexpr int32_t kDefaultMin = 1;
  static constexpr int32_t kDefaultMax = 1000000;

  int32_t min = kDefaultMin;
  int32_t max = kDefaultMax;

  // Rounds a raw draw to the nearest integer, then clamps it into [min, max].
  // Compare in double before converting: a lognormal tail can exceed the
  // int32 range (or be +inf), and converting that is undefined. The bounds
  // are integers, so clamping before rounding equals rounding before it.
  // In (min, max) std::round(x) is RoundHalfAway(x) (|x| < 2^31), inline.
  int32_t Apply(double x) const {
    if (!(x > min)) return min;  // also catches NaN
    if (x >= max) return max;
    return static_cast<int32_t>(RoundHalfAway(x));
  }
  bool Contains(int64_t n) const { return n >= min && n <= max; }
  std::string Describe() const;  // "clamp [1, 1000000]"
};

// Reads "min" and "max" (both optional); an error if min > max.
LengthClamp ReadLengthClamp(const JsonView& cfg);

// Short number formatting for Describe(): "120", "4.787", "0.25".
std::string FormatParam(double x, int significant_digits = 6);

std::unique_ptr<LengthDistribution> MakeFixedLengths(const JsonView& cfg);
std::unique_ptr<LengthDistribution> MakeUniformLengths(const JsonView& cfg);
std::unique_ptr<LengthDistribution> MakeNormalLengths(const JsonView& cfg);
std::unique_ptr<LengthDistribution> MakeLognormalLengths(const JsonView& cfg);
std::unique_ptr<LengthDistribution> MakeExponentialLengths(const JsonView& cfg);
std::unique_ptr<LengthDistribution> MakeEmpiricalLengths(const JsonView& cfg);

}  // namespace servesim
