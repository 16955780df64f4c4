// `servesim compare A.json [B.json] [--set-b k=v ...]`: is B better than A?
// Paired replications with common random numbers until the primary
// metric's difference is resolved, precise enough, or out of budget.
#include <iostream>
#include <memory>

#include "sim/analysis/compare.h"
#include "sim/core/json_view.h"
#include "sim/analysis/compare_output.h"
#include "sim/cli/analysis_cli.h"
#include "sim/cli/commands.h"
#include "sim/core/output_file.h"

namespace servesim {
namespace {

struct CompareCliOptions {
  std::vector<std::string> scenarios;  // A, and optionally B
  std::vector<std::string> sets, sets_a, sets_b;
  std::string primary = "ttft_p99", slo, save_result;
  double precision = 0.05, utilization = 0;
  int min_replications = 3, max_replications = 30, jobs = 0;
  bool quiet = false;
  bool no_saturation = false;
};

// "file --set k=v ..." for the report.
std::string Label(const std::string& path,
                  const std::vector<std::string>& sets) {
  std::string label = path.empty() ? "<embedded default>" : path;
  for (const std::string& s : sets) label += " --set " + s;
  return label;
}

StatusOr<Scenario> LoadVariant(const char* name, const std::string& path,
                               const std::vector<std::string>& sets) {
  StatusOr<Scenario> sc = LoadScenarioArg(path, sets);
  if (!sc.ok())
    return Status::Error(std::string(name) + ": " + sc.status().message());
  return sc;
}

Status RunCompareCommand(const CompareCliOptions& o) {
  if (Status st = CheckOutputPaths({{"--save-result", o.save_result}},
                                    o.scenarios);
      !st.ok()) {
    return st;
  }
  const std::string a_path = o.scenarios.empty() ? "" : o.scenarios[0];
  const bool b_file = o.scenarios.size() == 2;
  if (!b_file && o.sets_b.empty()) {
    return Status::Error(
        "compare: expected a second scenario B.json or --set-b overrides "
        "making B from A, got neither");
  }
  const std::string b_path = b_file ? o.scenarios[1] : a_path;
  std::vector<std::string> a_sets = o.sets, b_sets = o.sets;
  a_sets.insert(a_sets.end(), o.sets_a.begin(), o.sets_a.end());
  b_sets.insert(b_sets.end(), o.sets_b.begin(), o.sets_b.end());
  CompareOptions co;
  co.primary = o.primary;
  co.precision = o.precision;
  co.min_replications = o.min_replications;
  co.max_replications = o.max_replications;
  co.jobs = o.jobs;
  co.estimate_saturation = !o.no_saturation;
  co.utilization = o.utilization;
  co.progress = !o.quiet;
  if (!o.slo.empty()) {
    StatusOr<std::vector<SloTerm>> slo = ParseSlo(o.slo);
    if (!slo.ok()) return slo.status();
    co.slo = *slo;
  }
  if (auto m = ParseCompareMetric(o.primary, "--primary"); !m.ok()) {
    return m.status();
  }
  StatusOr<Scenario> a = LoadVariant("A", a_path, a_sets);
  if (!a.ok()) return a.status();
  StatusOr<Scenario> b = LoadVariant("B", b_path, b_sets);
  if (!b.ok()) return b.status();
  if (a->json == b->json) {
    return Status::Error("compare: A and B are the same scenario (" +
                         Label(a_path, a_sets) +
                         "); expected a difference between them");
  }
  StatusOr<Comparison> c =
      ComparePaired(*a, Label(a_path, a_sets), *b, Label(b_path, b_sets), co);
  if (!c.ok()) return c.status();
  WriteCompareTable(*c, std::cout);
  if (o.save_result.empty()) return Status::Ok();
  return WriteTextFile(o.save_result, DumpOutputJson(CompareJson(*c), 2) + "\n");
}

}  // namespace

Command AddCompareCommand(CLI::App* app) {
  auto o = std::make_shared<CompareCliOptions>();
  CLI::App* cmd = app->add_subcommand(
      "compare",
      "Is B better than A? Paired replications with common random numbers, "
      "B - A per metric with its 95% interval and a verdict, repeated until "
      "the primary metric is resolved or the budget runs out");
  cmd->add_option("scenarios", o->scenarios,
                  "A.json [B.json] (default A: embedded chat; without B.json, "
                  "B is A with --set-b)")
      ->expected(0, 2);
  cmd->add_option("--set", o->sets,
                  "Override a value in both A and B (repeatable)")
      ->check(NotAnOption());
  cmd->add_option("--set-a", o->sets_a,
                  "Override a value in A only (repeatable)")
      ->check(NotAnOption());
  cmd->add_option("--set-b", o->sets_b,
                  "Override a value in B only (repeatable)")
      ->check(NotAnOption());
  cmd->add_option("--primary", o->primary,
                  "Metric that decides when to stop: ttft|tpot|e2el_pP, "
                  "throughput, output_throughput, goodput (default ttft_p99); "
                  "CLASS:metric for one of workload.classes, e.g. "
                  "interactive:ttft_p99")
      ->check(NotAnOption());
  cmd->add_option("--precision", o->precision,
                  "Stop when the primary difference's half-width is within "
                  "this share of A's value (default 0.05)")
      ->check(NumberIn(1e-6, 10.0));
  cmd->add_option("--min-replications", o->min_replications,
                  "Replications of the first look (default 3); replication k "
                  "of both variants uses seed = scenario seed + k")
      ->check(NumberIn(2, 1000));
  cmd->add_option("--max-replications", o->max_replications,
                  "Budget of replications per variant (default 30)")
      ->check(NumberIn(2, 1000));
  cmd->add_option("--utilization", o->utilization,
                  "Run both variants at this share of A's saturation "
                  "throughput mu instead of the scenarios' rates, e.g. 0.9")
      ->check(NumberIn(1e-3, 10.0));
  cmd->add_option("--slo", o->slo,
                  "SLO terms for goodput, e.g. ttft_p99=2s,tpot_p99=100ms")
      ->check(NotAnOption());
  cmd->add_flag("-q,--quiet", o->quiet,
                "No progress on stderr (shown after ~2 s; the report is printed as usual)");
  cmd->add_option("-j,--jobs", o->jobs, "Threads (default: all cores)")
      ->check(NumberIn(0, 4096));
  cmd->add_option("--save-result", o->save_result,
                  "Write the comparison as JSON")
      ->check(NotAnOption());
  cmd->add_flag(
      "--no-saturation", o->no_saturation,
      "Skip the saturation runs that give each variant's load rho = rate / mu");
  return [cmd, o]() -> Status {
    if (!cmd->parsed()) return Status::Ok();
    return RunCompareCommand(*o);
  };
}

}  // namespace servesim
