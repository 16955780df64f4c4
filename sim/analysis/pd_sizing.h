// `servesim capacity` on a disaggregated scenario: the cheapest
// prefill:decode split meeting an SLO at a target rate. Each split (P
// prefill and D decode instances, the pools' own GPU, TP and engine) is the
// scenario with /disaggregation/{prefill,decode}/replicas set and is judged
// at the full target rate by capacity's rules (EvaluateRate: replications
// with common random numbers, MSER-5 warm-up, drift doubling, 95% bounds
// of each SLO percentile).
//
// Splits are tried in order of fleet cost ($/h when both pools' GPUs have
// a price, else GPU count), then fewer prefill instances first, so the
// first passing split is the cheapest; every other split of the same cost
// is also run, so the table shows the ratio's neighbourhood at the
// answer's size. No split is skipped: one with fewer instances in both
// pools than another costs less and is tried before it anyway.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/capacity.h"
#include "sim/analysis/prices.h"

namespace servesim {

struct PdSizingOptions {
  CapacityOptions capacity;  // SLO, replications, precision, jobs
  double target_rate = 0;    // requests/s into the whole deployment; > 0
  int max_prefill = 16, max_decode = 16;  // instances per pool tried
};

struct PdSplit {
  int prefill = 0, decode = 0;
  int gpus = 0;                     // prefill * tp_p + decode * tp_d
  std::optional<double> usd_per_hour;
  bool evaluated = false;  // false: costlier than the answer, not run
  RateEvaluation at;  // evaluated: the verdict at the target rate
  // Evaluated splits: one more run (replication 0) with the pools' figures.
  double prefill_busy = 0, decode_busy = 0, link_busy = 0;
  // Where requests wait, ms (means over measured, completed requests): send
  // -> prefill done (prefill queue and compute), and KV arrived -> decode
  // admission (decode queue). The pool that binds shows here.
  double prefill_ms = 0, decode_wait_ms = 0;
  double transfer_share_of_mean_ttft = 0;
};

struct PdSizingResult {
  std::vector<SloTerm> slo;
  double target_rate = 0;
  PriceTable prices;
  std::string prefill_gpu, decode_gpu;
  int prefill_tp = 1, decode_tp = 1;
  std::vector<PdSplit> splits;   // in the order tried (cost order)
  std::optional<size_t> cheapest;  // index into splits
  int evaluations = 0;
};

StatusOr<PdSizingResult> SizePdSplit(const Scenario& base, const PdSizingOptions& o,
                                     PriceTable prices);

void WritePdSizingTable(const Scenario& sc, const PdSizingResult& r, std::ostream& os);
// The report's data ("pd_sizing" section, with the capacity context).
nlohmann::json PdSizingReportJson(const Scenario& sc, const PdSizingResult& r);

}  // namespace servesim
