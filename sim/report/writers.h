// Report writers: the console report, the vLLM-compatible result JSON, and
// the per-request CSV. Every number travels with its context.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/summary.h"
#include "sim/scenario/scenario.h"

namespace servesim {

// "2 replicas of 1x h200 (tp=1, ep=2), 56292 KV blocks each of 16 tokens
// (derived from memory)": the model line's deployment, in every report.
std::string DeploymentText(const Scenario& sc);
// The engine's settings in its own words (vLLM's or SGLang's), one line.
std::string EngineText(const EngineConfig& e);
void WriteConsoleReport(const Scenario& scenario, const RunSummary& s,
                        std::ostream& os);
// Keys as `vllm bench serve --save-result` writes them for the same
// quantities, plus servesim's own under "servesim".
nlohmann::json ResultJson(const Scenario& scenario, const RunSummary& s);
// One row per request created (finished, rejected or unfinished); the last
// column is the request's class name (workload.classes), empty without.
void WriteDetailedCsv(const SimulationOutput& out, std::ostream& os,
                      const RequestClasses& classes = {});
// The same, a row at a time (streamed while a run goes): the header line,
// and one request's row appended to *row.
const char* DetailedCsvHeader();
// What printf("%.9f", ToSeconds(ns)) (decimals 9) or "%.6f" of
// ToMillis(ns) (decimals 6) prints, appended to *out; from integers when
// 0 <= ns < 1e15.
void AppendNanosAsFixed(int64_t ns, int decimals, std::string* out);
// ttft_ms and e2el_ms are the client's: client_lag (a frontend's output
// delay) after the engine's first_token_s and finish_s.
void AppendDetailedCsvRow(const Request& r, const RequestClasses& classes,
                          std::string* row, SimTime client_lag = 0);
// The cost model's step-time error bar, as one line and as JSON (null when
// unknown).
std::string CostErrorText(const CostModelError& e);
nlohmann::json CostErrorJson(const CostModelError& e);
// "99" for 99, "99.9" for 99.9: the spelling vLLM uses in key names.
std::string PercentileName(double p);

}  // namespace servesim
