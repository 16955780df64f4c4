// Pieces of the HTML report's data (schema in sim/report/html_report.h)
// that every analysis command shares: the context block, and the charts
// drawn from one representative run (CDFs, batch sizes, time series).
#pragma once

#include "sim/core/output_file.h"

#include <string>

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.h"
#include "sim/report/format.h"
#include "sim/report/summary.h"
#include "sim/scenario/scenario.h"

namespace servesim {

// {"scenario", "model", "gpu", "tp", "arrival", "seed", "percentiles",
//  "warmup", "prefix_hit_rate", "utilization"}; `rs` is a representative
// run (its warm-up and hit rate), `utilization` says how load was set.
nlohmann::json ContextJson(const Scenario& sc, const RunSummary& rs,
                           const std::string& arrival,
                           const std::string& utilization);

// Empirical CDFs of the measured, finished requests' TTFT, TPOT and E2E
// latency in ms, each at most `max_points` points: {"ttft_ms": [[x, F]...]}.
nlohmann::json CdfsJson(const SimulationOutput& out, int max_points = 200);

// [[size, count], ...] of sequences per step (exact below 128; above, the
// histogram's bucket midpoints).
nlohmann::json BatchSizeHistJson(const SimulationOutput& out);

// {"t_s", "kv_usage", "waiting", "running"} sampled every interval_s from
// the run's step records (SimulationInput::record_steps): the same rows
// `run --save-steps` writes, so the report's time series and the step
// export cannot disagree. At each sample: for every replica its latest
// step that started by then (KV blocks used, running and waiting after
// scheduling), summed over replicas; KV usage as a fraction of all blocks.
// Null when the run recorded no steps.
nlohmann::json TimeseriesJson(const SimulationOutput& out, double interval_s);


}  // namespace servesim
