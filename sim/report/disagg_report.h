// Disaggregated prefill/decode runs: what the pools, the links and the KV
// transfers did, for the console report and the result JSON's
// "disaggregation" section. Computed from the run's output, beside (not
// inside) RunSummary: runs of one deployment have no such section.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.h"
#include "sim/metrics/log_histogram.h"
#include "sim/metrics/stats.h"
#include "sim/scenario/scenario.h"

namespace servesim {

struct DisaggSummary {
  int32_t prefill_replicas = 0, decode_replicas = 0;
  // Share of the run [0, end] each pool's GPUs spent running steps (mean
  // over the pool's instances), and each decode link spent transferring.
  double prefill_busy = 0, decode_busy = 0, link_busy = 0;
  int64_t transfers = 0;   // ended
  double bytes_moved = 0;  // by them, summed over the decode GPUs' links
  // Measured, completed requests, ms: send -> prefill end (queue and
  // prefill), prefill end -> KV arrived (link queue and wire), of which the
  // wait for the link, and KV arrived -> decode admission (decode queue).
  SampleStats prefill_ms, transfer_ms, link_wait_ms, decode_wait_ms;
  // The transfer's share of each request's TTFT (mean and percentiles of
  // the per-request ratio), and mean transfer / mean TTFT.
  SampleStats transfer_share;
  double transfer_share_of_mean_ttft = 0;
};

// What the summary needs of each request's path, taken one request at a
// time in id order (SimulationInput::on_disagg_request), so that the run
// need not keep its requests. Each figure of each measured, completed
// request goes to a log-linear histogram (ns; the transfer's share of TTFT
// in billionths): memory does not grow with the run, counts, minima, maxima
// and means are exact, percentiles within 0.4% (as ITL's).
class DisaggDigest {
 public:
  void Add(const Request& r, const DisaggRequest& t);
  // From a run that kept its requests (SimulationInput::keep_requests).
  static DisaggDigest FromOutput(const SimulationOutput& out);

 private:
  friend DisaggSummary SummarizeDisagg(const SimulationOutput&, const SimulationInput&,
                                       DisaggDigest, const std::vector<double>&);
  LogHistogram prefill_, transfer_, wait_, decode_, share_;
  double ttft_sum_ = 0, transfer_sum_ = 0;
};

DisaggSummary SummarizeDisagg(const SimulationOutput& out, const SimulationInput& in,
                              DisaggDigest digest,
                              const std::vector<double>& percentiles);
// The console section (after the main report).
void WriteDisaggReport(const Scenario& sc, const DisaggSummary& d, std::ostream& os);
// The result JSON's "disaggregation" section.
nlohmann::json DisaggJson(const Scenario& sc, const DisaggSummary& d);

}  // namespace servesim
