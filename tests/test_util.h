// Helpers shared by tests: build scenarios from JSON text through the real
// loader, and run them.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/engine/run_invariants.h"
#include "sim/report/summary.h"
#include "sim/scenario/scenario.h"

namespace servesim::testing {

inline Scenario MustParse(const std::string& json,
                          const std::vector<std::string>& overrides = {}) {
  StatusOr<Scenario> sc = ParseScenario(json, "<test>", overrides);
  if (!sc.ok()) {
    ADD_FAILURE() << sc.status().message();
    throw std::runtime_error(sc.status().message());
  }
  return std::move(sc.value());
}

// `sc` with `edit` applied to its JSON and loaded again from the text: how
// tests make a variant independently of the typed edits the analysis
// commands use (sim/scenario/scenario_edits.h).
inline StatusOr<Scenario> Reloaded(const Scenario& sc,
                                   const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = sc.json;
  edit(j);
  return ParseScenario(j.dump(), sc.file, {});
}

// Every run made here is checked against the run-level invariants
// (sim/engine/run_invariants.h): a violation fails the calling test, one
// failure per line. `check_invariants` adds the full KV-cache/scheduler
// check after every step (and makes RunSimulation abort on a violation):
// O(KV blocks) per step, so it is left to the tests that exercise the cache.
inline RunSummary RunScenario(const Scenario& sc, SimulationOutput* keep = nullptr,
                              bool check_invariants = false) {
  SimulationInput in = sc.ToSimulationInput();
  in.check_invariants = check_invariants;
  in.record_steps = true;
  SimulationOutput out = RunSimulation(in);
  for (const std::string& line : CheckRunInvariants(in, out)) {
    ADD_FAILURE() << sc.file << ": run invariant violated: " << line;
  }
  RunSummary s = Summarize(out, in, sc.ArrivalDescription(), sc.OfferedRate());
  if (keep) *keep = std::move(out);
  return s;
}

// A scenario with the linear cost model, for exact and queueing checks:
// a pure queue (no frontend), so a request reaches the engine at its send.
// `workload` and `engine` are JSON object bodies. Keys of `engine` replace
// the defaults here (a key given twice in one object is an error).
inline std::string LinearScenario(const std::string& cost,
                                  const std::string& workload,
                                  const std::string& engine = "") {
  // 60,000 blocks of 16 tokens: more than any test's requests need, and
  // within what an H200 can hold beside Llama-3.1-8B's weights (64,534).
  nlohmann::json e = {{"num_gpu_blocks", 60000},
                      {"max_num_batched_tokens", 65536}};
  if (!engine.empty()) e.update(nlohmann::json::parse("{" + engine + "}"));
  return R"({"seed": 7, "model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
             "cost_model": {"type": "linear", )" + cost + R"(},
             "engine": )" + e.dump() + R"(, "frontend": {"enabled": false},
             "workload": {)" + workload + "}}";
}

}  // namespace servesim::testing
