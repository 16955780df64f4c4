// `servesim validate --save-json`: a measured-run comparison as JSON, the
// same figures as its console table (sim/analysis/measured_run.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/analysis/measured_run.h"

namespace servesim {

// {"command": "validate", "scenario", "measured", "requests", "rows":
// [{"metric", "unit", "measured", "predicted", "error_pct",
// "peer_error_pct"}], "per_request", "over_time", "frontend_delay",
// "peer"}; figures that do not exist (no peer, no scheduled or arrival
// times in the log) are null.
nlohmann::json ComparisonJson(const RunComparison& c, const std::string& scenario,
                              const std::string& measured);

}  // namespace servesim
