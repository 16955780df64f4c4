#include "sim/analysis/measured_run_json.h"
#include "sim/report/json_numbers.h"

#include <cmath>

namespace servesim {
namespace {

// NaN (a figure the log cannot give) is null, as in the other reports.
}  // namespace

nlohmann::json ComparisonJson(const RunComparison& c, const std::string& scenario,
                              const std::string& measured) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ValidationRow& r : c.rows) {
    rows.push_back({{"metric", r.metric},
                    {"unit", r.unit},
                    {"measured", FiniteOrNull(r.measured)},
                    {"predicted", FiniteOrNull(r.predicted)},
                    {"error_pct", FiniteOrNull(r.error_pct())},
                    {"peer_error_pct", FiniteOrNull(r.peer_error_pct)}});
  }
  return {
      {"command", "validate"},
      {"scenario", scenario},
      {"measured", measured},
      {"requests", c.requests},
      {"rows", rows},
      {"per_request",
       {{"ttft_median_ape_pct", FiniteOrNull(c.ttft_median_ape_pct)},
        {"e2e_median_ape_pct", FiniteOrNull(c.e2e_median_ape_pct)},
        {"ttft_correlation", FiniteOrNull(c.ttft_correlation)},
        {"e2e_correlation", FiniteOrNull(c.e2e_correlation)}}},
      {"over_time",
       {{"bucket_s", RunComparison::kBucketS},
        {"throughput_error_pct", FiniteOrNull(c.throughput_over_time_error_pct)},
        // < 0: the log has no scheduled times.
        {"running_error_pct", c.running_over_time_error_pct < 0
                                  ? nlohmann::json(nullptr)
                                  : FiniteOrNull(c.running_over_time_error_pct)}}},
      {"frontend_delay",
       {{"p50_ms", FiniteOrNull(c.frontend_delay_p50_ms)},
        {"p90_ms", FiniteOrNull(c.frontend_delay_p90_ms)},
        {"prompt_correlation", FiniteOrNull(c.frontend_delay_prompt_correlation)}}},
      {"peer", c.peer.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.peer)},
  };
}

}  // namespace servesim
