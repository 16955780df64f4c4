// Open-loop arrival processes: the gap between consecutive intended request
// times. Configured by {"process": "poisson"|"gamma"|"constant", "rate": r,
// "burstiness": b}. Gaps are drawn from the exact distribution, never clipped.
#pragma once

#include <memory>
#include <string>

#include "sim/core/json_view.h"
#include "sim/core/rng.h"

namespace servesim {

class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  virtual double NextGapSeconds(Rng& rng) const = 0;
  virtual double rate() const = 0;  // requests per second
  virtual std::string Describe() const = 0;  // e.g. "gamma(rate=10/s, burstiness=0.25)"
};

// Only open-loop processes; {"process": "closed"} is handled by the caller.
// Throws ConfigError naming the JSON path.
std::unique_ptr<ArrivalProcess> MakeArrivalProcess(const JsonView& cfg);

}  // namespace servesim
