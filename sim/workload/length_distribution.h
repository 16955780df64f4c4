// Token-length distributions for prompts and outputs. Each is configured by
// a JSON object such as {"dist": "lognormal", "median": 120, "p99": 2048}
// and draws whole token counts >= 1, clamped to optional "min"/"max".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/core/json_view.h"
#include "sim/core/rng.h"

namespace servesim {

// Longest prompt or output a distribution, prefix model or trace may give:
// 2^24 tokens (16.7 M), far beyond any context window. With prefixes (at
// most 1e8 tokens) or a session's history (capped at 2^30) a prompt plus its
// output still fits int32; lengths near 2^31 used to overflow and leave
// requests silently unfinished.
inline constexpr int32_t kMaxLengthTokens = int32_t{1} << 24;

class LengthDistribution {
 public:
  virtual ~LengthDistribution() = default;
  virtual int32_t Sample(Rng& rng) const = 0;
  // The longest length Sample() can return: the clamp's max (or a fixed
  // value, or the longest row of an empirical table, clamped). A deployment
  // sized for this workload (vLLM's --max-model-len) reads it.
  virtual int32_t Max() const = 0;
  // e.g. "lognormal(median=120, p99=2048; mu=4.787, sigma=1.222) in [1, 32768]"
  virtual std::string Describe() const = 0;
  // Whether every draw is the same length (a closed loop of such outputs
  // keeps its clients in phase; the report says so).
  virtual bool Constant() const { return false; }
};

// Throws ConfigError naming the JSON path (or CSV file and line for
// "empirical") on any bad parameter or input.
std::unique_ptr<LengthDistribution> MakeLengthDistribution(const JsonView& cfg);

}  // namespace servesim
