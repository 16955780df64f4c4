// The capacity search (see capacity.h).
#include "sim/analysis/capacity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "sim/analysis/parallel.h"
#include "sim/analysis/runs.h"

namespace servesim {
namespace {

// Runs whose TTFT rises by more than this (log ratio, ~10%) from the first
// half of their kept requests to the second, on average over the
// replications, have not settled. No significance test: with 3
// replications it has no power (t = 4.3), and a false alarm only costs a
// longer run. Noise at light load: a half's mean TTFT over ~2,000
// log-normal prompts (sigma 1.2) has a CV of ~4%, so the mean of 3 log
// ratios has a standard deviation of ~3%: 10% is over 3 of them.
constexpr double kDriftLimit = 0.10;

// The point's interval for the term's metric and percentile (p50, p90 or
// p99), or null.
Interval* PointPercentile(PointStats* p, const SloTerm& t) {
  MetricIntervals* m = t.metric == SloMetric::kTtft   ? &p->ttft_ms
                       : t.metric == SloMetric::kTpot ? &p->tpot_ms
                                                      : &p->e2el_ms;
  if (t.percentile == 50) return &m->p50;
  if (t.percentile == 90) return &m->p90;
  if (t.percentile == 99) return &m->p99;
  return nullptr;
}

// "capacity h200 x1 (candidate 2/5)": what a progress line is about.
std::string ProgressLabel(const char* what, const Scenario& base, const CapacityOptions& o) {
  std::string label = std::string(what) + " " + base.gpu.name + " x" + std::to_string(base.GpusPerReplica());
  if (!o.progress_context.empty()) label += " (" + o.progress_context + ")";
  return label;
}

class RateEvaluator {
 public:
  RateEvaluator(const Scenario& base, const CapacityOptions& o, ProgressBar* bar)
      : base_(base), o_(o), bar_(bar) {}

  StatusOr<RateEvaluation> Evaluate(double rate) {
    int64_t length = base_.workload.trace ? 0 : base_.workload.num_requests;
    for (int doubling = 0;; ++doubling, length *= 2) {
      StatusOr<Scenario> sc = WithRate(base_, rate);
      if (sc.ok() && length > 0) {
        sc = WithNumRequests(*sc, length);
      }
      if (!sc.ok()) return sc.status();
      const bool can_lengthen = length > 0 && doubling < o_.max_length_doublings;
      StatusOr<RateEvaluation> e = AtLength(
          std::make_shared<const Scenario>(std::move(sc.value())), can_lengthen);
      if (!e.ok()) return e.status();
      e->point.rate = rate;
      e->requests_per_run = length;
      if (!restart_) return e;
    }
  }

 private:
  // Replications at one run length; sets restart_ when the runs drift and
  // may be lengthened.
  StatusOr<RateEvaluation> AtLength(std::shared_ptr<const Scenario> sc, bool can_lengthen) {
    restart_ = false;
    std::vector<RunResult> runs;
    RateEvaluation e;
    while (true) {
      const int have = static_cast<int>(runs.size());
      const int add = have == 0 ? std::max(3, o_.replications)
                                : std::min(std::max(3, o_.replications),
                                           o_.max_replications - have);
      std::vector<RunSpec> specs(add);
      for (int k = 0; k < add; ++k) {
        specs[k].scenario = sc;
        specs[k].replication = have + k;
        specs[k].truncate_warmup = true;
        specs[k].extra_percentiles = kPointPercentiles;
        for (const SloTerm& t : o_.slo) specs[k].extra_percentiles.push_back(t.percentile);
        specs[k].slo = o_.slo;  // goodput share and SLO samples (runs.h)
      }
      if (bar_) bar_->AddTotal(add);
      for (RunResult& r : RunAll(specs, o_.jobs, bar_)) {
        if (Status st = CheckSomethingMeasured(*sc, r.summary); !st.ok()) return st;
        runs.push_back(std::move(r));
      }
      e = Summarize(runs);
      const int n = static_cast<int>(runs.size());
      // Failures first: more replications or longer runs only confirm them.
      if (e.point.stable_fraction < 1) return Verdict(e, false, RateStop::kUnstable);
      bool above = false, within = true, precise = true;
      for (const SloCheck& c : e.checks) {
        above = above || c.value_ms.lo > c.limit_ms;
        within = within && c.value_ms.hi <= c.limit_ms;
        precise = precise && RelativeHalfWidth(c.value_ms) <= o_.precision;
      }
      if (above) return Verdict(e, false, RateStop::kDecided);
      bool settled = e.drift.mean <= kDriftLimit;
      for (const RunResult& r : runs) settled = settled && r.truncation.settled;
      if (!settled) {
        if (can_lengthen) {
          restart_ = true;
          return e;
        }
        return Verdict(e, false, RateStop::kBudget);
      }
      if (within) return Verdict(e, true, RateStop::kDecided);
      if (precise) return Verdict(e, false, RateStop::kPrecision);
      if (n >= o_.max_replications) return Verdict(e, false, RateStop::kBudget);
    }
  }

  RateEvaluation Summarize(const std::vector<RunResult>& runs) const {
    RateEvaluation e;
    std::vector<const RunSummary*> group;
    std::vector<double> goodput, drift;
    for (const RunResult& r : runs) {
      group.push_back(&r.summary);
      goodput.push_back(r.inspected * r.summary.steady_request_throughput);
      drift.push_back(r.truncation.drift);
      e.mean_truncated += static_cast<double>(r.truncation.requests) / runs.size();
      e.rejected += r.summary.failed;
      e.incomplete += r.summary.incomplete;
    }
    e.point = AggregatePoint(group);
    e.goodput_rps = MeanInterval(goodput);
    e.drift = MeanInterval(drift);
    for (size_t i = 0; i < o_.slo.size(); ++i) {
      std::vector<std::vector<double>> by_run;
      for (const RunResult& r : runs) by_run.push_back(r.collected[i]);
      const SloTerm& t = o_.slo[i];
      e.checks.push_back({t.name, t.limit_ms, PooledPercentileInterval(by_run, t.percentile)});
      // The point's percentile of an SLO metric is the pooled one too, so
      // the table and the JSON quote one figure.
      if (Interval* p = PointPercentile(&e.point, t)) *p = e.checks.back().value_ms;
    }
    return e;
  }

  static RateEvaluation Verdict(RateEvaluation e, bool feasible, RateStop stop) {
    e.feasible = feasible;
    e.stop = stop;
    return e;
  }

  const Scenario& base_;
  const CapacityOptions& o_;
  ProgressBar* bar_;
  bool restart_ = false;
};

}  // namespace

Status ValidateAnswer(const Scenario& base, const CapacityOptions& o, CapacityResult* res) {
  const SaturationEstimate& sat = res->saturation;
  const double mu = std::max(0.0, std::min(sat.mu.lo, sat.mu_rps));
  const double floor = o.lo_fraction * mu, cap = o.hi_fraction * mu;
  const double start = res->max_rate > 0 ? res->max_rate : floor;
  ProgressBar bar(ProgressLabel("validate", base, o), 0, 0);
  ValidationOptions vo = o.validation;
  vo.jobs = o.jobs;
  StatusOr<ValidatedCapacity> v =
      ValidateCapacity(base, o.slo, start, floor, cap, vo, o.progress ? &bar : nullptr);
  bar.Finish();
  if (!v.ok()) return v.status();
  res->validated = *v;
  const bool none = v->rate.mean <= floor;  // the SLO is not met even there
  res->max_rate = none ? 0 : v->rate.mean;
  res->max_rate_lo = none ? 0 : v->rate.lo;
  // Where the validated answer lies in [floor, cap] (the notes read it).
  res->where = none                             ? BisectionResult::Where::kBelowRange
               : v->rate.mean >= cap * (1 - 1e-9) ? BisectionResult::Where::kAboveRange
                                                : BisectionResult::Where::kInside;
  if (res->max_rate <= 0) return Status::Ok();
  RateEvaluator evaluator(base, o, nullptr);
  StatusOr<RateEvaluation> at = evaluator.Evaluate(res->max_rate);
  if (!at.ok()) return at.status();
  at->point.utilization = res->max_rate / res->saturation.mu_rps;
  res->at_max = *at;
  return Status::Ok();
}

const char* RateStopName(RateStop r) {
  switch (r) {
    case RateStop::kUnstable: return "unstable";
    case RateStop::kDecided: return "decided";
    case RateStop::kPrecision: return "precision";
    case RateStop::kBudget: return "budget";
  }
  return "?";
}

StatusOr<CapacityResult> FindCapacity(const Scenario& base,
                                      const CapacityOptions& o) {
  if (Status st = CheckOpenLoop(base, "capacity"); !st.ok()) return st;
  if (o.replications < 3 || o.max_replications < o.replications) {
    return Status::Error(
        "capacity: expected at least 3 replications per rate (-r) and a budget "
        "(--max-replications) no smaller, got " + std::to_string(o.replications) +
        " and " + std::to_string(o.max_replications) +
        ": one replication cannot bound a percentile");
  }
  if (!(o.precision > 0 && o.precision < 1)) {
    return Status::Error("capacity: --precision: expected a relative half-width in (0, 1)");
  }
  CapacityResult res;
  StatusOr<SaturationEstimate> sat =
      o.saturation ? StatusOr<SaturationEstimate>(*o.saturation) : EstimateSaturation(base);
  if (!sat.ok()) return sat.status();
  res.saturation = *sat;
  // The answer never exceeds what the replica can surely serve.
  const double mu = std::max(0.0, std::min(sat->mu.lo, sat->mu_rps));
  if (!(mu > 0)) {
    return Status::Error(base.file + ": the saturation throughput's lower 95% "
                         "bound is not positive; expected a longer run "
                         "(workload.num_requests)");
  }
  ProgressBar bar(ProgressLabel("capacity", base, o), 0, 0);
  RateEvaluator evaluator(base, o, o.progress ? &bar : nullptr);
  Status error = Status::Ok();
  int step = 0;
  auto feasible = [&](double rate) {
    if (!error.ok()) return false;
    char stage[64];
    std::snprintf(stage, sizeof stage, "bisection step %d at %.3g req/s", ++step, rate);
    bar.SetStage(stage);
    StatusOr<RateEvaluation> e = evaluator.Evaluate(rate);
    if (!e.ok()) {
      error = e.status();
      return false;
    }
    e->point.utilization = rate / sat->mu_rps;
    res.trail.push_back(*e);
    return e->feasible;
  };
  const BisectionResult b = BisectMaxFeasible(
      o.lo_fraction * mu, o.hi_fraction * mu, feasible, o.rel_tol);
  bar.Finish();
  if (!error.ok()) return error;
  res.where = b.where;
  res.evaluations = b.evaluations;
  res.infeasible_rate = b.infeasible;
  res.max_rate = b.where == BisectionResult::Where::kBelowRange ? 0 : b.value;
  res.screening_rate = res.max_rate_lo = res.max_rate;
  // The report shows the largest passing rate, or the lowest rate tried.
  for (const RateEvaluation& e : res.trail) {
    const bool better = e.feasible ? (!res.at_max.feasible || e.point.rate > res.at_max.point.rate)
                                   : (!res.at_max.feasible &&
                                      (res.at_max.point.rate == 0 || e.point.rate < res.at_max.point.rate));
    if (better) res.at_max = e;
  }
  if (o.validation.window_requests > 0 && !base.workload.trace) {
    if (Status st = ValidateAnswer(base, o, &res); !st.ok()) return st;
  }
  return res;
}

StatusOr<RateEvaluation> EvaluateRate(const Scenario& base, double rate,
                                      const CapacityOptions& o) {
  RateEvaluator evaluator(base, o, nullptr);
  return evaluator.Evaluate(rate);
}

double MaxRateIfStepsSlower(const CapacityResult& r, double slower) {
  const double scale = 1 + slower;
  // A validated answer scales the same way, window by window.
  if (r.validated) return r.max_rate / scale;
  double best = 0;
  for (const RateEvaluation& e : r.trail) {
    if (!e.feasible) continue;
    bool holds = true;
    for (const SloCheck& c : e.checks) holds = holds && c.value_ms.hi * scale <= c.limit_ms;
    if (holds) best = std::max(best, e.point.rate / scale);
  }
  return best;
}

}  // namespace servesim
