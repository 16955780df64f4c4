// Numbers for result JSON: what has no finite value is null.
#pragma once

#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

namespace servesim {

inline nlohmann::json FiniteOrNull(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

inline nlohmann::json OrNull(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

}  // namespace servesim
