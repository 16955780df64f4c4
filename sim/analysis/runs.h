// Independent replications of scenarios and their variants (the variants
// themselves: sim/scenario/scenario_edits.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/parallel.h"
#include "sim/analysis/saturation.h"
#include "sim/analysis/slo.h"
#include "sim/analysis/steady_state.h"
#include "sim/core/status.h"
#include "sim/report/summary.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_edits.h"

namespace servesim {

// A run whose warm-up covers every finished request measured nothing: its
// latencies would print as 0.00 ms (and an SLO search would say "met at no
// rate"), so it is an error naming the warm-up key, not a result.
Status CheckSomethingMeasured(const Scenario& sc, const RunSummary& summary);

// Ok for open-loop traffic with an arrival rate; else an error naming
// `command` (a closed loop is pointed at `servesim loops`).
Status CheckOpenLoop(const Scenario& sc, const char* command);

// Replication k of a scenario runs with seed = scenario seed + k, so the
// replications of every point (and of every variant) share their random
// numbers: what-if comparisons use common random numbers.
struct RunSpec {
  std::shared_ptr<const Scenario> scenario;
  int replication = 0;
  std::vector<double> extra_percentiles;  // added to the scenario's set
  bool keep_output = false;               // keep the SimulationOutput
  bool record_steps = false;              // with keep_output: fill output.steps
  // MSER-5 warm-up truncation on top of the scenario's warm-up
  // (steady_state.h): sweep and capacity points are steady-state figures.
  bool truncate_warmup = false;
  // Optional per-run figure computed while the output is still alive.
  std::function<double(const SimulationOutput&)> inspect;
  // Optional per-request values kept from the run (after any warm-up
  // truncation), e.g. one vector per SLO term for pooled percentiles.
  std::function<std::vector<std::vector<double>>(const SimulationOutput&)> collect;
  // The same probes as data, so the run can be sent to another process (a
  // Ray task, python/servesim/ray.py) and give the same result: with SLO
  // terms, inspected = GoodShare and collected = SloSamples of them; with
  // `saturation`, RunResult::saturation from the requests.
  std::vector<SloTerm> slo;
  bool saturation = false;
};

struct RunResult {
  RunSummary summary;
  std::optional<SimulationOutput> output;  // when keep_output
  WarmupTruncation truncation;             // with truncate_warmup
  std::vector<std::vector<double>> collected;  // with collect
  double inspected = 0;
  std::optional<SaturationEstimate> saturation;  // with spec.saturation
};

// Runs the spec through the executor when one is set and takes it, else
// here (RunHere).
RunResult RunOne(const RunSpec& spec);
RunResult RunHere(const RunSpec& spec);
// Where RunOne's runs go: returns the result, or nullopt for a spec it
// cannot send (closures, kept outputs), which then runs here. Must be
// thread-safe: RunAll calls it from `jobs` threads. Empty: all runs here.
using RunExecutor = std::function<std::optional<RunResult>(const RunSpec&)>;
void SetRunExecutor(RunExecutor executor);
bool HasRunExecutor();
// All specs on `jobs` threads; results in spec order.
std::vector<RunResult> RunAll(const std::vector<RunSpec>& specs, int jobs,
                              ProgressBar* bar);

// The value of percentile p in s (s must have been computed with it).
double PercentileValue(const SampleStats& s, double p);

}  // namespace servesim
