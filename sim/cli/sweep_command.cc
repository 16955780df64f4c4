// `servesim sweep`: latency vs load for one replica, with confidence
// intervals over replications and the queueing-theory overlay.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "sim/analysis/report_data.h"
#include "sim/analysis/sweep_output.h"
#include "sim/cli/analysis_cli.h"
#include "sim/cli/commands.h"
#include "sim/core/output_file.h"

namespace servesim {
namespace {

struct SweepCliOptions : AnalysisCliOptions {
  std::string utilizations, rates;
  std::string csv;
};

Status RunSweepCommand(const SweepCliOptions& o) {
  if (Status st = CheckOutputPaths(
          {{"--json", o.json}, {"--html", o.html}, {"--csv", o.csv}},
                                    {o.scenario});
      !st.ok()) {
    return st;
  }
  StatusOr<Scenario> sc = LoadScenarioArg(o.scenario, o.sets);
  if (!sc.ok()) return sc.status();
  SweepOptions so;
  so.replications = o.replications;
  so.jobs = o.jobs;
  so.progress = !o.quiet;
  if (!o.utilizations.empty()) {
    auto us = ParseNumberList(o.utilizations, "--utilizations");
    if (!us.ok()) return us.status();
    so.utilizations = *us;
  }
  if (!o.rates.empty()) {
    auto rs = ParseNumberList(o.rates, "--rates");
    if (!rs.ok()) return rs.status();
    so.rates = *rs;
  }
  StatusOr<SweepResult> r = RunSweep(*sc, so);
  if (!r.ok()) return r.status();
  WriteSweepTable(*sc, *r, std::cout);
  if (!o.csv.empty()) {
    std::ostringstream csv;
    WriteSweepCsv(*r, csv);
    if (Status st = WriteTextFile(o.csv, csv.str()); !st.ok()) return st;
  }
  if (o.json.empty() && o.html.empty()) return Status::Ok();
  return WriteReportFiles(SweepReportJson(*sc, *r), o.json, o.html);
}

}  // namespace

Command AddSweepCommand(CLI::App* app) {
  auto o = std::make_shared<SweepCliOptions>();
  CLI::App* cmd = app->add_subcommand(
      "sweep",
      "Latency vs load: estimate the saturation throughput mu, then run the "
      "scenario at fractions of mu (or at --rates), R replications each");
  AddAnalysisOptions(cmd, o.get(), "per point");
  cmd->add_option("--utilizations", o->utilizations,
                  "Target utilizations of mu (default 0.5,0.7,0.85,0.9,0.95,1.0,1.05)")
      ->check(NotAnOption());
  cmd->add_option("--rates", o->rates, "Explicit arrival rates in req/s, e.g. 10,20,30")
      ->check(NotAnOption());
  cmd->add_option("--csv", o->csv, "Write one CSV row per point")
      ->check(NotAnOption());
  return [cmd, o]() -> Status {
    if (!cmd->parsed()) return Status::Ok();
    return RunSweepCommand(*o);
  };
}

}  // namespace servesim
