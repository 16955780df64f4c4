#include "sim/analysis/measured_run_json.h"

#include <cmath>

namespace servesim {
namespace {

// NaN (a figure the log cannot give) is null, as in the other reports.
nlohmann::json Num(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json ComparisonJson(const RunComparison& c, const std::string& scenario,
                              const std::string& measured) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ValidationRow& r : c.rows) {
    rows.push_back({{"metric", r.metric},
                    {"unit", r.unit},
                    {"measured", Num(r.measured)},
                    {"predicted", Num(r.predicted)},
                    {"error_pct", Num(r.error_pct())},
                    {"peer_error_pct", Num(r.peer_error_pct)}});
  }
  return {
      {"command", "validate"},
      {"scenario", scenario},
      {"measured", measured},
      {"requests", c.requests},
      {"rows", rows},
      {"per_request",
       {{"ttft_median_ape_pct", Num(c.ttft_median_ape_pct)},
        {"e2e_median_ape_pct", Num(c.e2e_median_ape_pct)},
        {"ttft_correlation", Num(c.ttft_correlation)},
        {"e2e_correlation", Num(c.e2e_correlation)}}},
      {"over_time",
       {{"bucket_s", RunComparison::kBucketS},
        {"throughput_error_pct", Num(c.throughput_over_time_error_pct)},
        // < 0: the log has no scheduled times.
        {"running_error_pct", c.running_over_time_error_pct < 0
                                  ? nlohmann::json(nullptr)
                                  : Num(c.running_over_time_error_pct)}}},
      {"frontend_delay",
       {{"p50_ms", Num(c.frontend_delay_p50_ms)},
        {"p90_ms", Num(c.frontend_delay_p90_ms)},
        {"prompt_correlation", Num(c.frontend_delay_prompt_correlation)}}},
      {"peer", c.peer.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.peer)},
  };
}

}  // namespace servesim
