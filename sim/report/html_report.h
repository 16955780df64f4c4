// The self-contained HTML report: one file that opens offline, with Chart.js
// (Debian's libjs-chart.js, 3.x) inlined and the report data embedded as
// JSON. The `sweep`, `loops`, `capacity` and `search` commands write it with
// --html; every section with charts also carries a data table.
//
// Input schema (every section is optional; only those present are drawn):
// {
//  "title": str,
//  "context": {"scenario": str, "model": str, "gpu": str, "tp": int,
//              "arrival": str, "seed": int, "percentiles": [number, ...],
//              "warmup": str, "prefix_hit_rate": number in [0, 1],
//              "utilization": str, <other>: str | number | bool},
//  "sweep": {"saturation_rps": number, "knee_rate": number | null,
//            "points": [{"rate": number, "utilization": number,
//                        "replications": int, "stable_fraction": number,
//                        "unstable": bool, "unstable_reason": str,
//                        "throughput_rps": Interval,
//                        "metrics": {<metric>: {<stat>: Interval}}}],
//            "theory": {<name>: [[rate, value], ...]}},
//  "cdfs": {<metric>: [[x, F], ...]},
//  "timeseries": {"t_s": [...], "kv_usage": [fraction in [0, 1], ...],
//                 "waiting": [...], "running": [...]},
//  "batch_size_hist": [[size, count], ...],
//  "loops": {"saturation_rps": mu, "theory": {<name>: [[rate, ms], ...]},
//            "points": [{"concurrency": N, "throughput_rps": x,
//                        "utilization": rho, "mm1_wait_ms": w, "mg1_wait_ms": w,
//                        "closed" | "open_poisson" | "open_gamma":
//                            {"ttft_p50_ms": a, "ttft_p99_ms": b,
//                             "queue_mean_ms": c}}],
//            "explanation": str},
//  "capacity": {"slo": {<name>: number}, "rows": [{"gpu": str, "tp": int,
//               "max_rate_per_replica": x, "replicas": int, "gpus": int,
//               "cost_per_million_output_tokens": x, "goodput_rps": x}]}
// }
// Interval = {"mean": m, "lo": l, "hi": h}: the mean over replications and
// its confidence interval; lo/hi may be absent (one replication). Metrics
// are usually ttft_ms, tpot_ms, e2el_ms (stats p50, p90, p99) and queue_ms
// (stat mean); theory is usually mm1_wait_ms and mg1_wait_ms, drawn dashed
// on the queue_ms chart. Numbers inside series may be null (an unstable
// point, a NaN): they are drawn as gaps. When knee_rate is absent the page
// finds the knee itself (first rate where TTFT p99 > 3x p50); null means
// "no knee". Unknown top-level keys are errors (a typo would silently drop
// a chart); unknown keys inside a section are ignored so that writers can
// add fields ahead of the charts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/status.h"

namespace servesim {

// Where Debian's libjs-chart.js puts the minified UMD build.
inline constexpr char kDefaultChartJsPath[] =
    "/usr/share/javascript/chart.js/chart.min.js";

// $SERVESIM_CHARTJS when set and non-empty, else kDefaultChartJsPath.
std::string ChartJsPath();

// The whole page. Errors: the Chart.js file cannot be read (the message
// names the path and the package), or a section is malformed (the message
// names the JSON path, e.g. "report data: /sweep/points/2/rate: expected a
// number, got \"fast\"").
StatusOr<std::string> RenderHtmlReport(const nlohmann::json& data);

}  // namespace servesim
