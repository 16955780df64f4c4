// The loops driver (see loops.h).
#include "sim/analysis/loops.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "sim/analysis/parallel.h"
#include "sim/analysis/runs.h"
#include "sim/analysis/stability.h"

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
  return WithWarmupRequests(*sc, w);
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
  const bool refine = o.concurrency.empty();
  std::vector<int> ns = refine ? DefaultConcurrencies(base.engine.max_num_seqs) : o.concurrency;
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  const int reps = std::max(1, o.replications);
  ProgressBar bar("loops", 0, reps);
  ProgressBar* pbar = o.progress ? &bar : nullptr;
  // Closed loops first: their throughput sets the open loops' rates.
  std::map<int, std::vector<RunResult>> closed_runs;
  auto run_closed = [&](const std::vector<int>& todo) -> Status {
    std::vector<RunSpec> closed;
    for (int n : todo) {
      StatusOr<Scenario> sc = WithWarmup(WithClosedLoop(base, n), n);
      if (!sc.ok()) return sc.status();
      AddReplications(std::make_shared<const Scenario>(std::move(sc.value())), reps, true,
                      &closed);
    }
    if (pbar) pbar->AddTotal(static_cast<int>(closed.size()) * 3);  // + 2 open loops each
    std::vector<RunResult> runs = RunAll(closed, o.jobs, pbar);
    for (size_t i = 0; i < todo.size(); ++i) {
      auto& group = closed_runs[todo[i]];
      for (int k = 0; k < reps; ++k) group.push_back(std::move(runs[i * reps + k]));
    }
    return Status::Ok();
  };
  if (Status st = run_closed(ns); !st.ok()) return st;
  // The default grid doubles N, which can jump from well below saturation
  // to flat out in one step and hide the blow-up: halve every gap of more
  // than 10 points of utilization (up to 16 points in all).
  auto utilization = [&](int n) {
    double x = 0;
    for (const RunResult& r : closed_runs[n]) x += r.inspected / reps;
    return x / sat->mu_rps;
  };
  for (int round = 0; refine && round < 4; ++round) {
    std::vector<int> add;
    for (size_t i = 0; i + 1 < ns.size() && ns.size() + add.size() < 16; ++i) {
      if (ns[i + 1] - ns[i] > 1 && utilization(ns[i + 1]) - utilization(ns[i]) > 0.1) {
        add.push_back((ns[i] + ns[i + 1]) / 2);
      }
    }
    if (add.empty()) break;
    if (Status st = run_closed(add); !st.ok()) return st;
    ns.insert(ns.end(), add.begin(), add.end());
    std::sort(ns.begin(), ns.end());
  }
  std::vector<RunSpec> open;
  for (size_t i = 0; i < ns.size(); ++i) {
    LoopsPoint p;
    p.concurrency = ns[i];
    p.closed = Group(closed_runs[ns[i]], 0, reps);
    std::vector<double> steady;
    for (int k = 0; k < reps; ++k) steady.push_back(closed_runs[ns[i]][k].inspected);
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
    // An open loop at the closed loop's throughput is an open queue: at or
    // above mu it has no steady state (a closed loop always has one), and
    // just below mu a run shorter than the queue's relaxation time has not
    // reached one. Both rules look at the rate and the run only, so Poisson
    // and gamma get one verdict (the window is the shorter of theirs).
    double window = INFINITY;
    for (size_t g : {2 * i, 2 * i + 1}) {
      for (int k = 0; k < reps; ++k) {
        window = std::min(window, open_runs[g * reps + k].summary.arrival_window_s);
      }
    }
    const std::string relax = RelaxationInstability(p.throughput_rps, sat->mu_rps, window);
    for (PointStats* s : {&p.open_poisson, &p.open_gamma}) {
      s->rate = p.throughput_rps;
      s->utilization = p.closed.utilization;
      ApplyLoadRule(sat->mu, s);
      if (!relax.empty() && s->stable_fraction > 0) {
        s->unstable_reason =
            s->stable_fraction < 1 ? relax + "; " + s->unstable_reason : relax;
        s->stable_fraction = 0;
      }
    }
  }
  return res;
}

}  // namespace servesim
