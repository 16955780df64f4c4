// `servesim run`: simulate one scenario and print the report.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "sim/analysis/runs.h"
#include "sim/cli/bench_flags.h"
#include "sim/cli/commands.h"
#include "sim/cli/run_progress.h"
#include "sim/core/json_view.h"
#include "sim/scenario/run_memory.h"
#include "sim/core/output_file.h"
#include "sim/core/paths.h"
#include "sim/report/disagg_report.h"
#include "sim/report/step_export.h"
#include "sim/report/stream_file.h"
#include "sim/report/summary.h"
#include "sim/report/timeline.h"
#include "sim/report/writers.h"

namespace servesim {
namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::string save_result;
  std::string save_detailed;
  std::string save_steps;     // per-step rows (CSV, or JSON lines: .jsonl)
  std::string save_timeline;  // Chrome trace event JSON
  int64_t save_steps_every = 1;
  double save_steps_from_s = 0, save_steps_until_s = 0;  // 0: no bound
  bool check_invariants = false;
  bool quiet = false;
  bool reference_markdown = false;  // print the scenario keys as Markdown
  BenchFlags bench;                  // vllm bench serve's flags
};


Status Run(const RunOptions& o) {
  // Every output path is checked before the run: one given twice, or one
  // that cannot be created, fails now rather than after the simulation.
  if (Status st = CheckOutputPaths({{"--save-result", o.save_result},
                                    {"--save-detailed", o.save_detailed},
                                    {"--save-steps", o.save_steps},
                                    {"--save-timeline", o.save_timeline}},
                                    {o.scenario});
      !st.ok()) {
    return st;
  }
  // The flags' own conflicts fail before the scenario is read.
  if (Status st = CheckBenchFlags(o.bench); !st.ok()) return st;
  if (Status st = CheckBenchFlagsAgainstSets(o.bench, o.sets); !st.ok()) return st;
  ScenarioParseOptions parse;
  if (o.bench.any()) {
    parse.edit = [&o](nlohmann::json* j) { return ApplyBenchFlags(o.bench, j); };
  }
  StatusOr<Scenario> sc =
      o.scenario.empty()
          ? ParseScenario(EmbeddedDefaultScenario(),
                          "<embedded default: scenarios/default_chat.json>", o.sets, parse)
          : LoadScenarioFile(o.scenario, o.sets, parse);
  if (!sc.ok()) return sc.status();
  const bool keeps_requests =
      !o.save_timeline.empty() || o.check_invariants || RunKeepsRequests(*sc);
  if (Status st = CheckRunMemory(*sc, keeps_requests); !st.ok()) return st;
  SimulationInput in = sc->ToSimulationInput();
  in.check_invariants = o.check_invariants;
  // Streamed outputs are opened before the run (a bad path fails now) and
  // appear, whole, only when the run has succeeded (the step export as soon
  // as the simulation has finished, the others at the end).
  std::unique_ptr<StepExporter> steps;
  std::unique_ptr<TimelineWriter> timeline;
  StepFilter filter;
  filter.every = o.save_steps_every;
  filter.from = FromSeconds(o.save_steps_from_s);
  if (o.save_steps_until_s > 0) filter.until = FromSeconds(o.save_steps_until_s);
  if (!o.save_steps.empty()) {
    auto e = StepExporter::Open(o.save_steps, filter);
    if (!e.ok()) return e.status();
    steps = std::move(*e);
  }
  if (!o.save_timeline.empty()) {
    auto t = TimelineWriter::Open(o.save_timeline, filter);
    if (!t.ok()) return t.status();
    timeline = std::move(*t);
  }
  if (steps && timeline) {
    in.on_step = [&](const StepRecord& r) {
      steps->Add(r);
      timeline->Add(r);
    };
  } else if (steps) {
    in.on_step = [&](const StepRecord& r) { steps->Add(r); };
  } else if (timeline) {
    in.on_step = [&](const StepRecord& r) { timeline->Add(r); };
  }
  // The summary's digest and the per-request CSV take each request as the
  // run retires it, so the run need not keep them (the timeline reads them
  // all at the end).
  std::unique_ptr<StreamFile> detailed;
  if (!o.save_detailed.empty()) {
    auto f = StreamFile::Open(o.save_detailed);
    if (!f.ok()) return f.status();
    detailed = std::move(*f);
    detailed->Write(DetailedCsvHeader());
  }
  RequestDigest digest(in);
  const SimTime client_lag = ClientLag(in);
  std::string row;
  in.on_request = [&](const Request& r) {
    digest.Add(r);
    if (detailed) {
      row.clear();
      AppendDetailedCsvRow(r, sc->workload.classes, &row, client_lag);
      detailed->Write(row);
    }
  };
  DisaggDigest disagg_digest;
  if (in.disagg) {
    in.on_disagg_request = [&](const Request& r, const DisaggRequest& t) {
      disagg_digest.Add(r, t);
    };
  }
  in.keep_requests = keeps_requests;
  // Only runs past ~2 s print anything (stderr); -q: none at all, and no hook.
  ProgressReporter progress("servesim run", DefaultProgressSettings(!o.quiet));
  if (!o.quiet) ReportRunProgress(&in, &progress);
  const SimulationOutput out = RunSimulation(in);
  progress.Finish();
  // The step rows are complete: the export's file goes in place on its
  // writer thread while the summary is computed.
  if (steps) steps->Close();
  const RunSummary summary =
      Summarize(out, in, sc->ArrivalDescription(), sc->OfferedRate(), digest);
  if (Status st = CheckSomethingMeasured(*sc, summary); !st.ok()) return st;
  const DisaggSummary disagg =
      SummarizeDisagg(out, in, std::move(disagg_digest), summary.percentiles);
  if (!o.quiet) {
    WriteConsoleReport(*sc, summary, std::cout);
    WriteDisaggReport(*sc, disagg, std::cout);
  }
  if (!o.save_result.empty()) {
    Status st = WriteFileWith(o.save_result, [&](std::ostream& os) {
      nlohmann::json j = ResultJson(*sc, summary);
      if (sc->disagg) j["servesim"]["disaggregation"] = DisaggJson(*sc, disagg);
      os << DumpOutputJson(j, 2) << "\n";
    });
    if (!st.ok()) return st;
  }
  if (detailed) {
    if (Status st = detailed->Finish(); !st.ok()) return st;
  }
  if (steps) {
    if (Status st = steps->Finish(); !st.ok()) return st;
  }
  if (timeline) {
    if (Status st = timeline->Finish(out.requests, out.end_time); !st.ok()) return st;
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
  run->add_option("--save-steps", opts->save_steps,
                  "Write one row per step, streamed (CSV; JSON lines if FILE "
                  "ends in .jsonl)")
      ->check(NotAnOption());
  run->add_option("--save-steps-every", opts->save_steps_every,
                  "Keep every Nth step in --save-steps and --save-timeline")
      ->check(NumberIn(1, 9.2e18));
  run->add_option("--save-steps-from", opts->save_steps_from_s,
                  "Keep only steps starting at or after this simulated time, s "
                  "(--save-steps and --save-timeline)")
      ->check(NumberIn(0.0, kMaxSpanSeconds));
  run->add_option("--save-steps-until", opts->save_steps_until_s,
                  "Keep only steps starting before this simulated time, s")
      ->check(NumberIn(0.0, kMaxSpanSeconds));
  run->add_option("--save-timeline", opts->save_timeline,
                  "Write a Chrome trace event JSON timeline (Perfetto, "
                  "chrome://tracing)")
      ->check(NotAnOption());
  run->add_flag("--check-invariants", opts->check_invariants,
                "Check KV-cache and scheduler invariants after every step (slow) "
                "and the run-level invariants at the end (causality, budgets, "
                "conservation, Little's law); a violation is printed and exits "
                "non-zero");
  run->add_flag("-q,--quiet", opts->quiet, "Do not print the console report or progress");
  AddBenchFlags(run, &opts->bench);
  run->add_flag("--scenario-reference-markdown", opts->reference_markdown,
                "Print the scenario key table below as Markdown and exit "
                "(docs/reference/scenario.md is made from it)");
  run->footer(ScenarioReference());
  return [run, opts]() -> Status {
    if (!run->parsed()) return Status::Ok();
    if (opts->reference_markdown) {
      std::cout << ScenarioReferenceMarkdown();
      return Status::Ok();
    }
    return Run(*opts);
  };
}

}  // namespace servesim
