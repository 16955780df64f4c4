// Fleet planning on top of the capacity search: each candidate (GPU type x
// tensor-parallel degree) re-runs the search with hardware.gpu/hardware.tp
// overridden; replicas for a target rate assume an ideal router (load split
// evenly, no routing imbalance); cost per million output tokens comes from
// a $/GPU-hour table.
#pragma once

#include <optional>
#include <ostream>
#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/capacity.h"
#include "sim/analysis/prices.h"

namespace servesim {

struct Candidate {
  std::string gpu;
  int tp = 1;
  int pp = 0;  // pipeline stages (hardware.pp); 0: the scenario's
  int gpus() const { return tp * std::max(pp, 1); }  // one replica's
  // "2", or "2x4" for tp 2 x pp 4 stages (the tables' tp column).
  std::string Layout() const;
};

// "h100-sxm:1,h200:1,h200:2,h100:2:2"; ":TP" may be left out (tp 1), and
// ":PP" (pipeline stages) too (the scenario's).
StatusOr<std::vector<Candidate>> ParseCandidates(const std::string& text);

struct PlanRow {
  Candidate candidate;
  bool fits = true;
  std::string note;  // why it does not fit (a few words), or a caveat
  std::string detail;  // does not fit: the full one-line error (file, JSON path)
  CapacityResult result;
  int64_t replicas = 0;  // for the target rate (1 without one); 0: unreachable
  int64_t gpus = 0;
  std::optional<double> usd_per_gpu_hour;
  // $ per million tokens at the SLO max, each with the whole replica-hour
  // charged to that kind (output, input, or all tokens together): one GPU
  // hour buys both, so a split between them would be a pricing choice.
  std::optional<double> cost_per_million_output_tokens;
  std::optional<double> cost_per_million_input_tokens, cost_per_million_tokens;
  // The candidate's step-cost error bar and the SLO max if its steps are
  // that much slower (MaxRateIfStepsSlower; 0 when unknown).
  CostModelError cost_error;
  double max_rate_if_slower = 0;
};

// The report's context block for capacity and P:D sizing: ContextJson
// without the prefix hit rate (it differs per candidate and rate), the
// warm-up rule (the scenario's, then MSER-5), the target rate and prices.
nlohmann::json CapacityContextJson(const Scenario& sc, const std::string& arrival,
                                   const std::string& utilization, double target_rate,
                                   const PriceTable& prices);

// One rate's verdict as report JSON: rate, utilization, feasible, stop
// rule, replications, SLO checks with intervals, the point's figures.
nlohmann::json RateEvaluationJson(const RateEvaluation& e);

// ceil(target / max_rate) under an ideal router, at least 1 (and at most
// kMaxReplicas); 0 when max_rate is 0 (no rate meets the SLO).
inline constexpr int64_t kMaxReplicas = int64_t{1} << 53;
int64_t ReplicasFor(double target_rate, double max_rate);

struct CapacityPlan {
  std::vector<SloTerm> slo;
  double target_rate = 0;  // 0: none given
  PriceTable prices;
  std::vector<PlanRow> rows;  // ranked: fitting rows by fleet $/h (or
                              // $/M tokens without a target), then the rest
};

// Runs the search for each candidate (empty: the scenario's own hardware).
// The base's own hardware matters only without candidates: load it with
// ScenarioParseOptions::defer_fit when they are given. A candidate whose
// memory cannot hold the model is a row that does not fit; when none fits,
// an error naming each.
StatusOr<CapacityPlan> PlanCapacity(const Scenario& base,
                                    const std::vector<Candidate>& candidates,
                                    const CapacityOptions& o, double target_rate,
                                    PriceTable prices);

void WriteCapacityTable(const Scenario& sc, const CapacityPlan& p, std::ostream& os);
nlohmann::json CapacityReportJson(const Scenario& sc, const CapacityPlan& p);

}  // namespace servesim
