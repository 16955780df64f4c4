// A measured serving run replayed: what servesim predicts for the same
// requests beside what the real engine measured, per request and in
// aggregate (`servesim validate`, docs/validation.md).
//
// The measured side is a JSON-lines log with one record per request, in the
// order the scenario's trace replays them (usually the same file): prompt
// and output tokens, and engine timestamps in seconds — when the engine
// queued the request, its first token, its last token (vLLM's
// RequestStateStats names by default). Latencies are computed on both sides
// by one definition, the one the measured log's bench used:
//   TTFT = first token - queued, TPOT = (last - first) / (output - 1),
//   E2E  = last token - queued,
// servesim's side anchored where the engine core receives a request.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/engine/simulation.h"

namespace servesim {

struct MeasuredFields {
  std::string prompt_tokens = "input_toks";
  std::string output_tokens = "output_toks";
  std::string queued = "queued_ts";
  std::string first_token = "first_token_ts";
  std::string last_token = "last_token_ts";
  // Optional: first scheduled (prefill start), for running over time.
  std::string scheduled = "scheduled_ts";
  // Optional: when the front end created the request, on another clock
  // (vLLM: wall clock), for the front end's delay to the engine.
  std::string arrival = "arrival_time";
};

// One request's lengths and latencies (seconds); tpot_s < 0 when it has
// one output token.
struct RequestLatency {
  int64_t prompt_tokens = 0, output_tokens = 0;
  double start_s = 0;  // its anchor (queued), for the makespan
  double ttft_s = 0, tpot_s = -1, e2e_s = 0;
  double scheduled_s = -1;  // first scheduled, after start_s; < 0: unknown
  // queued - arrival on their two clocks (a constant offset plus the front
  // end's delay); NaN when the log has no arrival.
  double queued_minus_arrival_s = std::numeric_limits<double>::quiet_NaN();
};

// Reads the measured log. A record missing a field, a non-number, a
// negative length or timestamps out of order (first token before queued,
// last before first) is an error naming `path:line`.
StatusOr<std::vector<RequestLatency>> ReadMeasuredRequests(
    const std::string& path, const MeasuredFields& fields);

// The simulated requests of a run, by id (every request must have finished).
StatusOr<std::vector<RequestLatency>> SimulatedRequests(
    const SimulationOutput& out);

struct ValidationRow {
  std::string metric;  // "TTFT mean", "TPOT p99", "makespan", ...
  std::string unit;    // "ms", "s", "tok/s"
  double measured = 0, predicted = 0;
  double error_pct() const;  // (predicted - measured) / measured, %
  // Another simulator's published error on the same metric (%), when a
  // peer summary was read; NaN otherwise.
  double peer_error_pct = std::numeric_limits<double>::quiet_NaN();
};

struct RunComparison {
  std::vector<ValidationRow> rows;
  int64_t requests = 0;
  // Per request: the median of |predicted - measured| / measured (%) and
  // the Pearson correlation of the two, for TTFT and E2E.
  double ttft_median_ape_pct = 0, e2e_median_ape_pct = 0;
  double ttft_correlation = 0, e2e_correlation = 0;
  // Over time, in kBucketS buckets from each side's first arrival: output
  // tokens per second (a request's tokens spread evenly from its first to
  // its last) and requests running (first scheduled to last token; -1 when
  // the log has no scheduled times). Each is the mean over the measured
  // run's buckets of |predicted - measured|, as % of the measured mean.
  static constexpr double kBucketS = 5;
  double throughput_over_time_error_pct = 0;
  double running_over_time_error_pct = -1;
  std::string peer;  // the peer summary read ("" none)
  // The measured front end's delay to the engine (queued - arrival less
  // its smallest value: the clocks' offset cannot be told from the
  // fastest request's delay), p50 and p90 in ms, and its correlation with
  // the prompt length; NaN without arrival times.
  double frontend_delay_p50_ms = std::numeric_limits<double>::quiet_NaN();
  double frontend_delay_p90_ms = std::numeric_limits<double>::quiet_NaN();
  double frontend_delay_prompt_correlation = std::numeric_limits<double>::quiet_NaN();
};

// A peer simulator's published comparison of the same run, in
// LLMServingSim's validation/summary.txt layout: lines "<metric words>
// <measured> <simulated> <diff>%" with TTFT, TPOT or Latency and Mean,
// Median, P90, P95 or P99 (ms). Fills peer_error_pct of the matching rows
// (Latency = E2E, Median = p50). A peer whose measured value differs from
// ours by more than its rounding (0.05 ms) or 0.1% (another definition or
// another run) is an error.
Status AddPeerErrors(const std::string& path, RunComparison* c);

// Pairs the two sides request by request: the same count and, per request,
// the same prompt and output lengths, else an error naming the first
// mismatch (the measured log and the replayed trace disagree).
StatusOr<RunComparison> CompareRequests(
    const std::vector<RequestLatency>& measured,
    const std::vector<RequestLatency>& predicted);

// The comparison as a console table, with `context` lines above it.
std::string ComparisonTable(const RunComparison& c);

}  // namespace servesim
