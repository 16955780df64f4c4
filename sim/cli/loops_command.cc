// `servesim loops`: the open- vs closed-loop lesson on one deployment.
#include <iostream>
#include <memory>

#include "sim/analysis/loops_output.h"
#include "sim/cli/analysis_cli.h"
#include "sim/cli/commands.h"
#include "sim/core/output_file.h"

namespace servesim {
namespace {

struct LoopsCliOptions : AnalysisCliOptions {
  LoopsCliOptions() { replications = 3; }
  std::string concurrency;
  double burstiness = 0.5;
};

Status RunLoopsCommand(const LoopsCliOptions& o) {
  if (Status st = CheckOutputPaths({{"--json", o.json}, {"--html", o.html}},
                                    {o.scenario});
      !st.ok()) {
    return st;
  }
  StatusOr<Scenario> sc = LoadScenarioArg(o.scenario, o.sets);
  if (!sc.ok()) return sc.status();
  LoopsOptions lo;
  lo.burstiness = o.burstiness;
  lo.replications = o.replications;
  lo.jobs = o.jobs;
  lo.progress = !o.quiet;
  if (!o.concurrency.empty()) {
    auto ns = ParseNumberList(o.concurrency, "--concurrency");
    if (!ns.ok()) return ns.status();
    for (double n : *ns) {
      if (n != static_cast<int>(n)) {
        return Status::Error("--concurrency " + o.concurrency +
                             ": expected whole numbers of clients");
      }
      lo.concurrency.push_back(static_cast<int>(n));
    }
  }
  StatusOr<LoopsResult> r = RunLoops(*sc, lo);
  if (!r.ok()) return r.status();
  WriteLoopsTable(*sc, *r, std::cout);
  if (o.json.empty() && o.html.empty()) return Status::Ok();
  return WriteReportFiles(LoopsReportJson(*sc, *r), o.json, o.html);
}

}  // namespace

Command AddLoopsCommand(CLI::App* app) {
  auto o = std::make_shared<LoopsCliOptions>();
  CLI::App* cmd = app->add_subcommand(
      "loops",
      "The lesson: closed loop of N clients vs open-loop Poisson and gamma "
      "arrivals at the same achieved throughput");
  AddAnalysisOptions(cmd, o.get(), "per run");
  cmd->add_option("--concurrency", o->concurrency,
                  "Closed-loop client counts, e.g. 8,32,128 (default 1,2,4,... "
                  "up to max_num_seqs)")
      ->check(NotAnOption());
  cmd->add_option("--burstiness", o->burstiness,
                  "Gamma shape of the bursty open loop (1 = Poisson, < 1 burstier)")
      ->check(PositiveNumber());
  return [cmd, o]() -> Status {
    if (!cmd->parsed()) return Status::Ok();
    return RunLoopsCommand(*o);
  };
}

}  // namespace servesim
