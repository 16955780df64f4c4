// The loops driver (see loops.h).
#include "sim/analysis/loops.h"

#include <algorithm>
#include <memory>

#include "sim/analysis/parallel.h"
#include "sim/analysis/runs.h"

namespace servesim {
namespace {

using SharedScenario = std::shared_ptr<const Scenario>;

// The closed loop's throughput is read over its steady part (as the
// saturation estimate: after the start-up burst, before clients stop being
// replaced), not over the whole run, whose drain at the end would bias it
// low and send the open loops a smaller rate than the closed loop carried.
double SteadyThroughput(const SimulationOutput& out) {
  return SaturationFromRequests(out.requests).mu_rps;
}

void AddReplications(const SharedScenario& sc, int reps, bool closed,
                     std::vector<RunSpec>* specs) {
  for (int k = 0; k < reps; ++k) {
    RunSpec spec;
    spec.scenario = sc;
    spec.replication = k;
    spec.extra_percentiles = kPointPercentiles;
    if (closed) spec.inspect = SteadyThroughput;
    specs->push_back(std::move(spec));
  }
}

// Every run at concurrency n excludes its first 2n requests (at least):
// the closed loop starts with all n clients sending at once, a burst no
// steady population produces; the open loops drop the same count.
StatusOr<Scenario> WithWarmup(StatusOr<Scenario> sc, int n) {
  if (!sc.ok()) return sc;
  const int64_t w = std::max<int64_t>(sc->metrics.warmup_requests, 2 * int64_t{n});
  return EditScenario(*sc, [w](nlohmann::json& j) {
    j["metrics"]["warmup_requests"] = w;
  });
}

PointStats Group(const std::vector<RunResult>& runs, size_t first, int reps) {
  std::vector<const RunSummary*> g;
  for (int k = 0; k < reps; ++k) g.push_back(&runs[first + k].summary);
  return AggregatePoint(g);
}

}  // namespace

std::vector<int> DefaultConcurrencies(int max_num_seqs) {
  std::vector<int> ns;
  for (int n = 1; n < max_num_seqs; n *= 2) ns.push_back(n);
  ns.push_back(max_num_seqs);
  return ns;
}

StatusOr<LoopsResult> RunLoops(const Scenario& base, const LoopsOptions& o) {
  LoopsResult res;
  res.burstiness = o.burstiness;
  StatusOr<SaturationEstimate> sat = EstimateSaturation(base);
  if (!sat.ok()) return sat.status();
  res.saturation = *sat;
  std::vector<int> ns = o.concurrency.empty()
                            ? DefaultConcurrencies(base.engine.max_num_seqs)
                            : o.concurrency;
  std::sort(ns.begin(), ns.end());
  const int reps = std::max(1, o.replications);
  ProgressBar bar("loops", static_cast<int>(ns.size()) * reps * 3, reps);
  ProgressBar* pbar = o.progress ? &bar : nullptr;
  // Closed loops first: their throughput sets the open loops' rates.
  std::vector<RunSpec> closed;
  for (int n : ns) {
    StatusOr<Scenario> sc = WithWarmup(WithClosedLoop(base, n), n);
    if (!sc.ok()) return sc.status();
    AddReplications(std::make_shared<const Scenario>(std::move(sc.value())),
                    reps, true, &closed);
  }
  const std::vector<RunResult> closed_runs = RunAll(closed, o.jobs, pbar);
  std::vector<RunSpec> open;
  for (size_t i = 0; i < ns.size(); ++i) {
    LoopsPoint p;
    p.concurrency = ns[i];
    p.closed = Group(closed_runs, i * reps, reps);
    std::vector<double> steady;
    for (int k = 0; k < reps; ++k) steady.push_back(closed_runs[i * reps + k].inspected);
    p.closed.throughput_rps = MeanInterval(steady);
    p.throughput_rps = p.closed.throughput_rps.mean;
    p.closed.utilization = p.throughput_rps / sat->mu_rps;
    res.points.push_back(p);
    for (double b : {0.0, o.burstiness}) {
      StatusOr<Scenario> sc =
          WithWarmup(WithOpenLoop(base, p.throughput_rps, b), ns[i]);
      if (!sc.ok()) return sc.status();
      AddReplications(std::make_shared<const Scenario>(std::move(sc.value())),
                      reps, false, &open);
    }
  }
  const std::vector<RunResult> open_runs = RunAll(open, o.jobs, pbar);
  bar.Finish();
  for (size_t i = 0; i < ns.size(); ++i) {
    LoopsPoint& p = res.points[i];
    p.open_poisson = Group(open_runs, (2 * i) * reps, reps);
    p.open_gamma = Group(open_runs, (2 * i + 1) * reps, reps);
    for (PointStats* s : {&p.open_poisson, &p.open_gamma}) {
      s->rate = p.throughput_rps;
      s->utilization = p.closed.utilization;
    }
  }
  return res;
}

}  // namespace servesim
