// `servesim run`: simulate one scenario and print the report.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "sim/cli/commands.h"
#include "sim/core/output_file.h"
#include "sim/core/paths.h"
#include "sim/report/writers.h"

namespace servesim {
namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string save_result;
  std::string save_detailed;
  bool check_invariants = false;
  bool quiet = false;
};


// A run whose warm-up covers every finished request measured nothing: its
// latencies would print as 0.00 ms, so it is an error, not a report.
Status CheckSomethingMeasured(const Scenario& sc, const RunSummary& summary) {
  if (summary.completed > 0 || summary.excluded_warmup == 0) return Status::Ok();
  const MetricsConfig& m = sc.metrics;
  const bool by_time = m.warmup_s > 0, by_count = m.warmup_requests > 0;
  std::ostringstream os;
  os << sc.file << ": "
     << (by_time && by_count ? "/metrics"
         : by_time           ? "/metrics/warmup_s"
                             : "/metrics/warmup_requests")
     << ": warm-up excludes every request: all " << summary.excluded_warmup
     << " finished requests arrived within the warm-up (";
  if (by_time) os << "warmup_s " << m.warmup_s << (by_count ? ", " : "");
  if (by_count) os << "warmup_requests " << m.warmup_requests;
  os << "), so nothing was measured; expected a warm-up shorter than the run "
        "(or more requests)";
  return Status::Error(os.str());
}

Status Run(const RunOptions& o) {
  StatusOr<Scenario> sc =
      o.scenario.empty()
          ? ParseScenario(EmbeddedDefaultScenario(),
                          "<embedded default: scenarios/default_chat.json>", o.sets)
          : LoadScenarioFile(o.scenario, o.sets);
  if (!sc.ok()) return sc.status();
  SimulationInput in = sc->ToSimulationInput();
  in.check_invariants = o.check_invariants;
  const SimulationOutput out = RunSimulation(in);
  const RunSummary summary =
      Summarize(out, in, sc->ArrivalDescription(), sc->OfferedRate());
  if (Status st = CheckSomethingMeasured(*sc, summary); !st.ok()) return st;
  if (!o.quiet) WriteConsoleReport(*sc, summary, std::cout);
  if (!o.save_result.empty()) {
    Status st = WriteFileWith(o.save_result, [&](std::ostream& os) {
      os << ResultJson(*sc, summary).dump(2) << "\n";
    });
    if (!st.ok()) return st;
  }
  if (!o.save_detailed.empty()) {
    Status st = WriteFileWith(o.save_detailed,
                          [&](std::ostream& os) { WriteDetailedCsv(out, os); });
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

}  // namespace

Command AddRunCommand(CLI::App* app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* run = app->add_subcommand(
      "run", "Simulate one scenario (default: the embedded chat scenario) and print the report");
  run->add_option("scenario", opts->scenario, "Scenario JSON file");
  run->add_option("--set", opts->sets,
                  "Override a scenario value, e.g. --set workload.arrival.rate=12 "
                  "(repeatable)")
      ->check(NotAnOption());
  run->add_option("--save-result", opts->save_result,
                  "Write the result JSON (vllm bench serve keys + \"servesim\")")
      ->check(NotAnOption());
  run->add_option("--save-detailed", opts->save_detailed,
                  "Write one CSV row per request")
      ->check(NotAnOption());
  run->add_flag("--check-invariants", opts->check_invariants,
                "Check KV-cache and scheduler invariants after every step (slow) "
                "and the run-level invariants at the end (causality, budgets, "
                "conservation, Little's law); a violation is printed and exits "
                "non-zero");
  run->add_flag("-q,--quiet", opts->quiet, "Do not print the console report");
  run->footer(ScenarioReference());
  return [run, opts]() -> Status {
    if (!run->parsed()) return Status::Ok();
    return Run(*opts);
  };
}

}  // namespace servesim
