// The capacity search (see capacity.h).
#include "sim/analysis/capacity.h"

#include <memory>
#include <optional>

#include "sim/analysis/parallel.h"
#include "sim/analysis/runs.h"

namespace servesim {
namespace {

struct Evaluation {
  bool feasible = false;
  PointStats point;
  Interval goodput_rps;
  std::vector<SloCheck> checks;
};

StatusOr<Evaluation> Evaluate(const Scenario& base, double rate,
                              const CapacityOptions& o, ProgressBar* bar) {
  StatusOr<Scenario> sc = WithRate(base, rate);
  if (!sc.ok()) return sc.status();
  auto shared = std::make_shared<const Scenario>(std::move(sc.value()));
  std::vector<RunSpec> specs(std::max(1, o.replications));
  for (size_t k = 0; k < specs.size(); ++k) {
    specs[k].scenario = shared;
    specs[k].replication = static_cast<int>(k);
    specs[k].extra_percentiles = kPointPercentiles;
    for (const SloTerm& t : o.slo) specs[k].extra_percentiles.push_back(t.percentile);
    specs[k].inspect = [&o](const SimulationOutput& out) {
      return GoodShare(out.requests, o.slo);
    };
  }
  if (bar) bar->AddTotal(static_cast<int>(specs.size()));
  const std::vector<RunResult> runs = RunAll(specs, o.jobs, bar);
  Evaluation e;
  std::vector<const RunSummary*> group;
  std::vector<double> goodput;
  for (const RunResult& r : runs) {
    group.push_back(&r.summary);
    goodput.push_back(r.inspected * r.summary.request_throughput);
  }
  e.point = AggregatePoint(group);
  e.point.rate = rate;
  e.goodput_rps = MeanInterval(goodput);
  e.feasible = e.point.stable_fraction == 1;
  for (const SloTerm& t : o.slo) {
    std::vector<double> xs;
    for (const RunResult& r : runs) xs.push_back(SloValue(r.summary, t));
    SloCheck c{t.name, t.limit_ms, MeanInterval(xs)};
    e.feasible = e.feasible && c.value_ms.hi <= t.limit_ms;
    e.checks.push_back(c);
  }
  return e;
}

}  // namespace

StatusOr<CapacityResult> FindCapacity(const Scenario& base,
                                      const CapacityOptions& o) {
  if (Status st = CheckOpenLoop(base, "capacity"); !st.ok()) return st;
  CapacityResult res;
  StatusOr<SaturationEstimate> sat = EstimateSaturation(base);
  if (!sat.ok()) return sat.status();
  res.saturation = *sat;
  const double mu = sat->mu_rps;
  ProgressBar bar("capacity " + base.gpu.name + " x" + std::to_string(base.tp),
                  0, 0);
  Status error = Status::Ok();
  std::optional<Evaluation> best;  // at the largest feasible rate so far
  auto feasible = [&](double rate) {
    if (!error.ok()) return false;
    StatusOr<Evaluation> e = Evaluate(base, rate, o, o.progress ? &bar : nullptr);
    if (!e.ok()) {
      error = e.status();
      return false;
    }
    if (e->feasible && (!best || rate > best->point.rate)) best = *e;
    if (!best && rate == o.lo_fraction * mu) best = *e;  // for the report
    return e->feasible;
  };
  const BisectionResult b = BisectMaxFeasible(
      o.lo_fraction * mu, o.hi_fraction * mu, feasible, o.rel_tol);
  bar.Finish();
  if (!error.ok()) return error;
  res.where = b.where;
  res.evaluations = b.evaluations;
  res.max_rate = b.where == BisectionResult::Where::kBelowRange ? 0 : b.value;
  if (best) {
    res.at_max = best->point;
    res.goodput_rps = best->goodput_rps;
    res.checks = best->checks;
  }
  return res;
}

}  // namespace servesim
