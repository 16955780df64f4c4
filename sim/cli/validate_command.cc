// `servesim validate`: replay a measured serving run and compare, per
// request and in aggregate (sim/analysis/measured_run.h).
#include <filesystem>
#include <iostream>
#include <memory>

#include "sim/analysis/measured_run.h"
#include "sim/analysis/measured_run_json.h"
#include "sim/cli/commands.h"
#include "sim/core/json_view.h"
#include "sim/core/output_file.h"
#include "sim/core/paths.h"
#include "sim/report/writers.h"
#include "sim/scenario/run_memory.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

struct ValidateOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string measured;             // default: the scenario's trace
  std::vector<std::string> fields;  // key=name
  std::string peer;                 // a peer's summary ("" : beside the log)
  std::string save_json;            // the comparison as JSON ("" : none)
};

// LLMServingSim's bench layout: <run>/vllm/requests.jsonl beside
// <run>/validation/summary.txt.
std::string PeerBesideLog(const std::string& log) {
  const std::filesystem::path p =
      std::filesystem::path(ResolveDataPath(log)).parent_path().parent_path() /
      "validation" / "summary.txt";
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p.string() : "";
}

Status SetField(const std::string& spec, MeasuredFields* f) {
  const size_t eq = spec.find('=');
  const std::string key = spec.substr(0, eq);
  const std::string name = eq == std::string::npos ? "" : spec.substr(eq + 1);
  std::string* target = key == "prompt_tokens"   ? &f->prompt_tokens
                        : key == "output_tokens" ? &f->output_tokens
                        : key == "queued"        ? &f->queued
                        : key == "first_token"   ? &f->first_token
                        : key == "last_token"    ? &f->last_token
                        : key == "scheduled"     ? &f->scheduled
                        : key == "arrival"       ? &f->arrival
                                                 : nullptr;
  if (target == nullptr || name.empty()) {
    return Status::Error("--field " + spec +
                         ": expected KEY=NAME with KEY one of prompt_tokens, "
                         "output_tokens, queued, first_token, last_token, scheduled, arrival");
  }
  *target = name;
  return Status::Ok();
}

Status Validate(const ValidateOptions& o) {
  if (Status st = CheckOutputPaths({{"--save-json", o.save_json}},
                                    {o.scenario, o.measured});
      !st.ok()) {
    return st;
  }
  MeasuredFields fields;
  for (const std::string& s : o.fields) {
    if (Status st = SetField(s, &fields); !st.ok()) return st;
  }
  StatusOr<Scenario> sc = LoadScenarioFile(o.scenario, o.sets);
  if (!sc.ok()) return sc.status();
  SimulationInput in = sc->ToSimulationInput();
  std::string measured = o.measured;
  if (measured.empty()) {
    if (!sc->workload.trace) {
      return Status::Error(o.scenario +
                           ": /workload/trace is not set; expected a trace "
                           "replay of the measured requests, or --measured FILE");
    }
    measured = sc->workload.trace->path;
  }
  StatusOr<std::vector<RequestLatency>> m = ReadMeasuredRequests(measured, fields);
  if (!m.ok()) return m.status();
  if (Status st = CheckRunMemory(*sc, true); !st.ok()) return st;
  in.keep_requests = true;
  const SimulationOutput out = RunSimulation(in);
  if (!out.input_error.empty()) return Status::Error(out.input_error);
  StatusOr<std::vector<RequestLatency>> p = SimulatedRequests(out);
  if (!p.ok()) return p.status();
  StatusOr<RunComparison> c = CompareRequests(m.value(), p.value());
  if (!c.ok()) return Status::Error(measured + ": " + c.status().message());
  const std::string peer = o.peer.empty() ? PeerBesideLog(measured) : o.peer;
  if (!peer.empty()) {
    if (Status st = AddPeerErrors(peer, &c.value()); !st.ok()) return st;
  }
  std::cout << "servesim validate: " << sc->file << "\n"
            << "  model " << sc->model.Label() << " on "
            << DeploymentText(*sc)
            << "\n  cost model " << sc->cost_model->Describe()
            << "\n  engine max_num_seqs " << sc->engine.max_num_seqs
            << ", max_num_batched_tokens " << sc->engine.max_num_batched_tokens
            << ", prefix caching " << (sc->engine.prefix_caching ? "on" : "off")
            << ", " << (sc->engine.async_scheduling ? "async" : "sync")
            << " scheduling\n  arrivals " << sc->ArrivalDescription() << "; seed "
            << sc->seed << "; every request compared (no warm-up excluded)\n"
            << "  measured " << measured << ": latencies from " << fields.queued
            << " (servesim: engine arrival), percentiles numpy-linear\n";
  if (!peer.empty()) {
    std::cout << "  peer error: another simulator's published (simulated - "
                 "measured) / measured, from "
              << (o.peer.empty() ? "the summary beside the log" : peer) << "\n";
  }
  std::cout << ComparisonTable(c.value());
  if (o.save_json.empty()) return Status::Ok();
  return WriteTextFile(
      o.save_json,
      DumpOutputJson(ComparisonJson(c.value(), sc->file, measured), 2) + "\n");
}

}  // namespace

Command AddValidateCommand(CLI::App* app) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app->add_subcommand(
      "validate",
      "Replay a measured serving run (a JSON-lines log of its requests with "
      "engine timestamps) and compare servesim's TTFT, TPOT and E2E with the "
      "measured ones, per request and in aggregate");
  cmd->add_option("scenario", opts->scenario,
                  "Scenario whose trace replays the measured requests")
      ->required();
  cmd->add_option("--set", opts->sets, "Override a scenario value (repeatable)")
      ->check(NotAnOption());
  cmd->add_option("--measured", opts->measured,
                  "The measured log (default: the scenario's trace file)")
      ->check(NotAnOption());
  cmd->add_option("--field", opts->fields,
                  "A field name of the measured log, KEY=NAME (KEY: "
                  "prompt_tokens input_toks, output_tokens output_toks, queued "
                  "queued_ts, first_token first_token_ts, last_token "
                  "last_token_ts, scheduled scheduled_ts and arrival "
                  "arrival_time (optional; arrival on the front end's clock): "
                  "vLLM RequestStateStats; seconds)")
      ->check(NotAnOption());
  cmd->add_option("--peer-summary", opts->peer,
                  "Another simulator's published comparison of the same run "
                  "(LLMServingSim's summary.txt layout), shown as a peer error "
                  "column (default: validation/summary.txt beside the log's "
                  "folder, when there is one)")
      ->check(NotAnOption());
  cmd->add_option("--save-json", opts->save_json,
                  "Write the comparison as JSON: the table's rows (measured, "
                  "predicted, error %) and the per-request and over-time figures")
      ->check(NotAnOption());
  return [cmd, opts]() -> Status {
    if (!cmd->parsed()) return Status::Ok();
    return Validate(*opts);
  };
}

}  // namespace servesim
