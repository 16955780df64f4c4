// `servesim capacity`: the highest rate meeting an SLO, per candidate
// hardware, with replicas and cost for a target rate.
#include <algorithm>
#include <iostream>
#include <memory>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/pd_sizing.h"
#include "sim/cli/analysis_cli.h"
#include "sim/cli/commands.h"
#include "sim/cli/validation_cli.h"
#include "sim/core/output_file.h"

namespace servesim {
namespace {

struct CapacityCliOptions : AnalysisCliOptions {
  CapacityCliOptions() { replications = 3; }  // the minimum: more are added as needed
  std::string slo, candidates, prices;
  double target_rate = 0;
  int max_replications = 20;
  double precision = 0.05;
  int max_prefill = 16, max_decode = 16;
  bool check_invariants = false;
  ValidationOptions validation;
};

// A disaggregated scenario: the cheapest prefill:decode split at the target
// rate (pd_sizing.h).
Status RunPdSizing(const CapacityCliOptions& o, const Scenario& sc, CapacityOptions co,
                   PriceTable prices) {
  if (!o.candidates.empty()) {
    return Status::Error(sc.file + ": /disaggregation: --candidates sets one GPU for a "
                         "co-located replica; set each pool's hardware in the scenario "
                         "(disaggregation.prefill.hardware, disaggregation.decode.hardware)");
  }
  PdSizingOptions po;
  po.capacity = std::move(co);
  po.target_rate = o.target_rate;
  po.max_prefill = o.max_prefill;
  po.max_decode = o.max_decode;
  StatusOr<PdSizingResult> r = SizePdSplit(sc, po, std::move(prices));
  if (!r.ok()) return r.status();
  WritePdSizingTable(sc, *r, std::cout);
  if (o.json.empty() && o.html.empty()) return Status::Ok();
  return WriteReportFiles(PdSizingReportJson(sc, *r), o.json, o.html);
}

Status RunCapacityCommand(const CapacityCliOptions& o) {
  if (Status st = CheckOutputPaths({{"--json", o.json}, {"--html", o.html}},
                                    {o.scenario});
      !st.ok()) {
    return st;
  }
  StatusOr<std::vector<SloTerm>> slo = ParseSlo(o.slo);
  if (!slo.ok()) return slo.status();
  std::vector<Candidate> candidates;
  if (!o.candidates.empty()) {
    auto cs = ParseCandidates(o.candidates);
    if (!cs.ok()) return cs.status();
    candidates = *cs;
  }
  StatusOr<PriceTable> prices =
      LoadPriceTable(o.prices.empty() ? DefaultPriceTablePath() : o.prices);
  if (!prices.ok()) return prices.status();
  // The candidates' hardware replaces the scenario's, so its own GPU need
  // not hold the model (PlanCapacity checks each candidate's).
  StatusOr<Scenario> sc =
      LoadScenarioArg(o.scenario, o.sets, {.defer_fit = !candidates.empty()});
  if (!sc.ok()) return sc.status();
  sc->check_invariants = o.check_invariants;
  CapacityOptions co;
  co.slo = *slo;
  co.replications = o.replications;
  co.max_replications = std::max(o.max_replications, o.replications);
  co.precision = o.precision;
  co.jobs = o.jobs;
  co.progress = !o.quiet;
  co.validation = o.validation;
  if (sc->disagg) return RunPdSizing(o, *sc, co, *prices);
  StatusOr<CapacityPlan> plan =
      PlanCapacity(*sc, candidates, co, o.target_rate, *prices);
  if (!plan.ok()) return plan.status();
  WriteCapacityTable(*sc, *plan, std::cout);
  if (o.json.empty() && o.html.empty()) return Status::Ok();
  return WriteReportFiles(CapacityReportJson(*sc, *plan), o.json, o.html);
}

}  // namespace

Command AddCapacityCommand(CLI::App* app) {
  auto o = std::make_shared<CapacityCliOptions>();
  CLI::App* cmd = app->add_subcommand(
      "capacity",
      "Highest arrival rate per replica meeting an SLO (bisection, 95% "
      "bounds), goodput, replicas and cost per candidate GPU x TP");
  AddAnalysisOptions(cmd, o.get(), "per rate at least (>= 3; more are added until "
                                    "the rate is decided, see --precision)");
  cmd->add_option("--max-replications", o->max_replications,
                  "Budget of replications per rate (default 20); a rate still "
                  "undecided then fails")
      ->check(NumberIn(3, 1000));
  cmd->add_option("--precision", o->precision,
                  "Relative 95% half-width that settles an SLO percentile "
                  "(default 0.05)")
      ->check(NumberIn(1e-4, 0.99));
  cmd->add_option("--slo", o->slo,
                  "SLO terms, e.g. ttft_p99=2s,tpot_p99=100ms[,e2el_p99=30s]")
      ->required()
      ->check(NotAnOption());
  cmd->add_option("--target-rate", o->target_rate,
                  "Fleet target in req/s: replicas = ceil(target / max rate "
                  "per replica), assuming an ideal router; with a "
                  "/disaggregation scenario (required) the rate every P:D split is "
                  "judged at")
      ->check(NumberIn(0, 1e300));
  cmd->add_option("--candidates", o->candidates,
                  "GPU:TP or GPU:TP:PP list to compare, e.g. h100-sxm:1,h200:1,h200:2 "
                  "or h100-sxm:4,h100-sxm:2:2 (PP: pipeline stages, default the "
                  "scenario's; default: the scenario's hardware; with it, the "
                  "scenario's GPU need not hold the model)")
      ->check(NotAnOption());
  AddValidationOptions(cmd, &o->validation);
  cmd->add_flag("--check-invariants", o->check_invariants,
                "Check the run-level invariants after every simulation (as run's "
                "flag); a violation aborts with the run's description");
  cmd->add_option("--max-prefill", o->max_prefill,
                  "Disaggregated scenarios: most prefill instances tried (default 16)")
      ->check(NumberIn(1, 1024));
  cmd->add_option("--max-decode", o->max_decode,
                  "Disaggregated scenarios: most decode instances tried (default 16)")
      ->check(NumberIn(1, 1024));
  cmd->add_option("--prices", o->prices,
                  "$/GPU-hour table (default models/gpu_prices.json: example list prices)")
      ->check(NotAnOption());
  return [cmd, o]() -> Status {
    if (!cmd->parsed()) return Status::Ok();
    return RunCapacityCommand(*o);
  };
}

}  // namespace servesim
