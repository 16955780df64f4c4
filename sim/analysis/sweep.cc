// The sweep driver (see sweep.h).
#include "sim/analysis/sweep.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "sim/analysis/parallel.h"
#include "sim/analysis/queueing.h"
#include "sim/analysis/runs.h"

namespace servesim {
namespace {

// Enough samples for a chart without flooding the report.
double TimeseriesInterval(const Scenario& sc, double rate) {
  double span = sc.workload.duration_s;
  if (sc.workload.num_requests > 0) {
    const double by_count = sc.workload.num_requests / rate;
    span = span > 0 ? std::min(span, by_count) : by_count;
  }
  return std::max(span / 300.0, 1e-3);
}

}  // namespace

double SweepMM1WaitMs(const SaturationEstimate& s, double rate) {
  return 1e3 * MM1Wait(rate / s.mu_rps, s.mean_service_s);
}

double SweepMG1WaitMs(const SaturationEstimate& s, double rate) {
  return 1e3 * MG1Wait(rate / s.mu_rps, s.mean_service_s, s.scv);
}

StatusOr<SweepResult> RunSweep(const Scenario& base, const SweepOptions& o) {
  if (Status st = CheckOpenLoop(base, "sweep"); !st.ok()) return st;
  SweepResult res;
  StatusOr<SaturationEstimate> sat = EstimateSaturation(base);
  if (!sat.ok()) return sat.status();
  res.saturation = *sat;
  std::vector<double> rates = o.rates;
  if (rates.empty()) {
    for (double u : o.utilizations) rates.push_back(u * sat->mu_rps);
  }
  std::sort(rates.begin(), rates.end());
  const int reps = std::max(1, o.replications);
  size_t rep_point = 0;  // nearest 85% utilization
  for (size_t i = 0; i < rates.size(); ++i) {
    if (std::abs(rates[i] / sat->mu_rps - 0.85) <
        std::abs(rates[rep_point] / sat->mu_rps - 0.85)) {
      rep_point = i;
    }
  }
  std::vector<RunSpec> specs;
  for (size_t i = 0; i < rates.size(); ++i) {
    StatusOr<Scenario> sc = WithRate(base, rates[i]);
    if (!sc.ok()) return sc.status();
    auto shared = std::make_shared<const Scenario>(std::move(sc.value()));
    for (int k = 0; k < reps; ++k) {
      RunSpec spec;
      spec.scenario = shared;
      spec.replication = k;
      spec.extra_percentiles = kPointPercentiles;
      spec.keep_output = o.keep_representative && i == rep_point && k == 0;
      spec.record_steps = spec.keep_output;
      specs.push_back(std::move(spec));
    }
  }
  ProgressBar bar("sweep", static_cast<int>(specs.size()), reps);
  std::vector<RunResult> runs = RunAll(specs, o.jobs, o.progress ? &bar : nullptr);
  bar.Finish();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (Status st = CheckSomethingMeasured(*specs[i].scenario, runs[i].summary); !st.ok()) {
      return st;
    }
  }
  std::vector<TailPoint> tails;
  for (size_t i = 0; i < rates.size(); ++i) {
    std::vector<const RunSummary*> group;
    for (int k = 0; k < reps; ++k) group.push_back(&runs[i * reps + k].summary);
    PointStats p = AggregatePoint(group);
    p.rate = rates[i];
    p.utilization = rates[i] / sat->mu_rps;
    ApplyLoadRule(sat->mu, &p);
    tails.push_back({p.rate, p.ttft_ms.p50.mean, p.ttft_ms.p99.mean});
    res.tail_separated.push_back(TailSeparated(tails.back()));
    res.points.push_back(p);
  }
  res.knee_rate = FindKnee(tails);
  if (!tails.empty()) res.baseline_p99_ms = tails.front().p99;  // rates are sorted
  if (o.keep_representative && !rates.empty()) {
    RunResult& r = runs[rep_point * reps];
    res.representative = std::move(r.output);
    res.representative_summary = r.summary;
    res.representative_rate = rates[rep_point];
    res.timeseries_interval_s = TimeseriesInterval(base, rates[rep_point]);
  }
  return res;
}

}  // namespace servesim
