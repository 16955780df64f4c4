// Runs one generated scenario under every check the simulation fuzzer makes:
//  - the run itself with SimulationInput::check_invariants (the KV cache and
//    scheduler after every step, the run-level invariants at the end): a
//    violation aborts, and the abort reporter prints the scenario's JSON;
//  - same seed => same output: a second run (without the checks, which must
//    not change anything) gives byte-identical result JSON and per-request
//    CSV; that run uses the simple reference engine
//    (EngineConfig::reference_engine), so it also proves the fast paths
//    change no result;
//  - throughput is not above the deployment's saturation throughput mu
//    (sim/analysis/saturation.h) by more than noise, where that comparison
//    is meaningful: one replica, traffic from distributions (no trace,
//    sessions or prefix model), no queue-cap stop, no preemption in either
//    run, no long_prefill_token_threshold, and enough requests for both
//    estimates. The threshold is excluded because it makes throughput fall
//    with concurrency, as in vLLM: it caps a prefill only while more than
//    one request is in the engine, so one client at a time prefills a
//    560-token prompt in one step while 2 x max_num_seqs clients prefill it
//    4 tokens a step (threshold 4): 61.8 vs 3.77 req/s on the same
//    deployment (fuzzer seed 1010277 of the 1-hour run of 2026-12-03).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::fuzz {

struct Outcome {
  bool valid = true;         // false: the scenario did not parse
  std::string parse_error;
  std::vector<std::string> problems;  // findings other than aborts
  int64_t requests = 0;
  bool saturation_checked = false;
  double throughput_over_mu = 0;  // when checked
};

struct CheckOptions {
  bool determinism = true;
  bool saturation = true;
  std::string label;  // names the scenario in reports, e.g. "seed 17"
};

Outcome CheckScenario(const nlohmann::json& scenario, const CheckOptions& options);

// From now on an abort (a broken invariant), a crash or an alarm (a run that
// hangs, see alarm(2)) first prints the scenario being checked, ready to
// replay with `servesim run FILE --check-invariants`, then hands the signal
// to whoever handled it before (libFuzzer, or the default).
void InstallAbortReporter();

// The report printed for a failing scenario: its problems and its JSON.
std::string FailureReport(const nlohmann::json& scenario, const Outcome& outcome);

}  // namespace servesim::fuzz
