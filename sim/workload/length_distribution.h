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

class LengthDistribution {
 public:
  virtual ~LengthDistribution() = default;
  virtual int32_t Sample(Rng& rng) const = 0;
  // e.g. "lognormal(median=120, p99=2048; mu=4.787, sigma=1.222) in [1, 32768]"
  virtual std::string Describe() const = 0;
};

// Throws ConfigError naming the JSON path (or CSV file and line for
// "empirical") on any bad parameter or input.
std::unique_ptr<LengthDistribution> MakeLengthDistribution(const JsonView& cfg);

}  // namespace servesim
