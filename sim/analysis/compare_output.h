// What `servesim compare` prints and saves: the console table (one row per
// metric: A, B, B - A and B/A with their intervals, the verdict) and the
// result JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "sim/analysis/compare.h"

namespace servesim {

void WriteCompareTable(const Comparison& c, std::ostream& out);
// Everything in the table plus each metric's per-replication values; NaN
// (nothing measured) becomes null.
nlohmann::json CompareJson(const Comparison& c);

}  // namespace servesim
