// The length-distribution factory and the clamp shared by every family.
#include "sim/workload/length_distribution.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/core/status.h"
#include "sim/workload/length_families.h"

namespace servesim {

std::string LengthClamp::Describe() const {
  return "clamp [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

LengthClamp ReadLengthClamp(const JsonView& cfg) {
  const Range bounds = Range::Closed(1, kMaxLengthTokens);
  LengthClamp c;
  c.min = static_cast<int32_t>(
      cfg.Integer("min", LengthClamp::kDefaultMin, bounds));
  c.max = static_cast<int32_t>(
      cfg.Integer("max", LengthClamp::kDefaultMax, bounds));
  if (c.min > c.max) {
    cfg.FailMessage("min", "min (" + std::to_string(c.min) +
                               ") must not exceed max (" +
                               std::to_string(c.max) + ")");
  }
  return c;
}

std::string FormatParam(double x, int significant_digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", significant_digits, x);
  return buf;
}

std::unique_ptr<LengthDistribution> MakeLengthDistribution(
    const JsonView& cfg) {
  if (!cfg.raw().is_object()) {
    throw ConfigError(cfg.file() + ": " +
                      (cfg.path().empty() ? "/" : cfg.path()) +
                      ": expected a length distribution object, got " +
                      DescribeJson(cfg.raw()));
  }
  // Each family checks its own keys, so the family is chosen first.
  const std::string dist = cfg.Choice(
      "dist", "",
      {"fixed", "uniform", "normal", "lognormal", "exponential", "empirical"});
  if (dist == "fixed") return MakeFixedLengths(cfg);
  if (dist == "uniform") return MakeUniformLengths(cfg);
  if (dist == "normal") return MakeNormalLengths(cfg);
  if (dist == "lognormal") return MakeLognormalLengths(cfg);
  if (dist == "exponential") return MakeExponentialLengths(cfg);
  return MakeEmpiricalLengths(cfg);
}

}  // namespace servesim
