// Aggregation of replications (see point_stats.h).
#include "sim/analysis/point_stats.h"

#include <algorithm>
#include <cmath>

#include "sim/analysis/runs.h"
#include "sim/analysis/stability.h"
#include "sim/report/json_numbers.h"

namespace servesim {
namespace {

template <typename Fn>
Interval Over(const std::vector<const RunSummary*>& runs, Fn get) {
  std::vector<double> xs;
  for (const RunSummary* r : runs) xs.push_back(get(*r));
  return MeanInterval(xs);
}

}  // namespace

MetricIntervals AggregateMetric(const std::vector<const SampleStats*>& runs) {
  std::vector<double> mean, p50, p90, p99;
  double max = 0;
  for (const SampleStats* s : runs) {
    mean.push_back(s->mean);
    p50.push_back(PercentileValue(*s, 50));
    p90.push_back(PercentileValue(*s, 90));
    p99.push_back(PercentileValue(*s, 99));
    if (s->count > 0) max = std::max(max, s->max);
  }
  // The mean stays an arithmetic mean (Little's law needs it), its
  // interval clamped at 0; percentiles get log-scale intervals, never below
  // 0 nor above the largest latency seen.
  Interval m = MeanInterval(mean);
  m.lo = std::max(0.0, m.lo);
  return {m, PercentileInterval(p50, max), PercentileInterval(p90, max),
          PercentileInterval(p99, max)};
}

PointStats AggregatePoint(const std::vector<const RunSummary*>& runs) {
  PointStats p;
  p.replications = static_cast<int>(runs.size());
  if (runs.empty()) return p;
  p.rate = runs[0]->offered_rate;
  int stable = 0;
  for (const RunSummary* r : runs) {
    const std::string why = RunInstability(*r);
    stable += why.empty() ? 1 : 0;
    if (p.unstable_reason.empty()) p.unstable_reason = why;
    p.rejected += r->failed;
    p.unfinished += r->incomplete;
  }
  p.stable_fraction = static_cast<double>(stable) / runs.size();
  if (stable < p.replications) {
    p.unstable_reason = std::to_string(p.replications - stable) + " of " +
                        std::to_string(p.replications) +
                        " replications unstable, e.g. " + p.unstable_reason;
  }
  // Steady state: over the arrival window, not up to the last finish.
  p.throughput_rps =
      Over(runs, [](const RunSummary& r) { return r.steady_request_throughput; });
  p.output_tokens_per_s =
      Over(runs, [](const RunSummary& r) { return r.steady_output_throughput; });
  p.input_tokens_per_s =
      Over(runs, [](const RunSummary& r) { return r.steady_input_throughput; });
  p.gpu_busy = Over(runs, [](const RunSummary& r) { return r.gpu_busy_fraction; });
  // Unknown (< 0: no FLOP basis, or pools of two GPU kinds) in any run:
  // unknown here too (NaN; null in JSON, "-" in tables).
  const bool utilization_known = std::all_of(
      runs.begin(), runs.end(), [](const RunSummary* r) { return r->mfu >= 0 && r->mbu >= 0; });
  if (utilization_known) {
    p.mfu = Over(runs, [](const RunSummary& r) { return r.mfu; });
    p.mbu = Over(runs, [](const RunSummary& r) { return r.mbu; });
  } else {
    p.mfu.mean = p.mbu.mean = std::nan("");
  }
  auto metric = [&](SampleStats RunSummary::*m) {
    std::vector<const SampleStats*> ss;
    for (const RunSummary* r : runs) ss.push_back(&(r->*m));
    return AggregateMetric(ss);
  };
  p.ttft_ms = metric(&RunSummary::ttft_ms);
  p.tpot_ms = metric(&RunSummary::tpot_ms);
  p.e2el_ms = metric(&RunSummary::e2el_ms);
  p.queue_ms = metric(&RunSummary::queue_ms);
  return p;
}

void ApplyLoadRule(const Interval& mu, PointStats* p) {
  const std::string why = LoadInstability(p->rate, mu);
  if (why.empty()) return;
  p->unstable_reason =
      p->stable_fraction < 1 ? why + "; " + p->unstable_reason : why;
  p->stable_fraction = 0;
}

nlohmann::json IntervalJson(const Interval& i) {
  nlohmann::json j = {{"mean", FiniteOrNull(i.mean)}};
  if (i.n > 1) {
    j["lo"] = FiniteOrNull(i.lo);
    j["hi"] = FiniteOrNull(i.hi);
  }
  return j;
}

nlohmann::json PointJson(const PointStats& p) {
  auto pct = [](const MetricIntervals& m) {
    return nlohmann::json{{"p50", IntervalJson(m.p50)},
                          {"p90", IntervalJson(m.p90)},
                          {"p99", IntervalJson(m.p99)}};
  };
  nlohmann::json j = {
      {"rate", p.rate},
      {"utilization", p.utilization},
      {"replications", p.replications},
      {"stable_fraction", p.stable_fraction},
      {"unstable", p.stable_fraction < 1},
      {"rejected", p.rejected},
      {"unfinished", p.unfinished},
      {"throughput_rps", IntervalJson(p.throughput_rps)},
      {"mfu", std::isfinite(p.mfu.mean) ? IntervalJson(p.mfu) : nlohmann::json(nullptr)},
      {"mbu", std::isfinite(p.mbu.mean) ? IntervalJson(p.mbu) : nlohmann::json(nullptr)},
      {"metrics",
       {{"ttft_ms", pct(p.ttft_ms)},
        {"tpot_ms", pct(p.tpot_ms)},
        {"e2el_ms", pct(p.e2el_ms)},
        {"queue_ms", {{"mean", IntervalJson(p.queue_ms.mean)}}}}}};
  if (p.stable_fraction < 1) j["unstable_reason"] = p.unstable_reason;
  return j;
}

}  // namespace servesim
