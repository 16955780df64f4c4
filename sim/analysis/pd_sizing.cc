// The prefill:decode split search (see pd_sizing.h).
#include "sim/analysis/pd_sizing.h"

#include <algorithm>
#include <memory>

#include "sim/analysis/runs.h"
#include "sim/report/disagg_report.h"
#include "sim/analysis/report_data.h"

namespace servesim {
namespace {

// Every split in the order tried: fleet cost, then GPUs, then fewer
// prefill instances.
std::vector<PdSplit> SplitsByCost(const PdSizingResult& r, const PdSizingOptions& o) {
  const std::optional<double> price_p = r.prices.Price(r.prefill_gpu);
  const std::optional<double> price_d = r.prices.Price(r.decode_gpu);
  std::vector<PdSplit> splits;
  for (int p = 1; p <= o.max_prefill; ++p) {
    for (int d = 1; d <= o.max_decode; ++d) {
      PdSplit s;
      s.prefill = p;
      s.decode = d;
      s.gpus = p * r.prefill_tp + d * r.decode_tp;
      if (price_p && price_d) {
        s.usd_per_hour = p * r.prefill_tp * *price_p + d * r.decode_tp * *price_d;
      }
      splits.push_back(s);
    }
  }
  auto cost = [](const PdSplit& s) {
    return s.usd_per_hour ? *s.usd_per_hour : static_cast<double>(s.gpus);
  };
  std::stable_sort(splits.begin(), splits.end(), [&](const PdSplit& a, const PdSplit& b) {
    if (cost(a) != cost(b)) return cost(a) < cost(b);
    if (a.gpus != b.gpus) return a.gpus < b.gpus;
    return a.prefill < b.prefill;
  });
  return splits;
}

bool SameCost(const PdSplit& a, const PdSplit& b) {
  if (a.usd_per_hour && b.usd_per_hour) return *a.usd_per_hour == *b.usd_per_hour;
  return a.gpus == b.gpus;
}

// One more run of each evaluated split (replication 0, run in parallel)
// for the pools' busy shares and the transfer's share of TTFT.
void AddPoolFigures(const Scenario& base, const PdSizingOptions& o, PdSizingResult* r) {
  std::vector<RunSpec> specs;
  std::vector<size_t> which;
  for (size_t i = 0; i < r->splits.size(); ++i) {
    const PdSplit& s = r->splits[i];
    if (!s.evaluated) continue;
    StatusOr<Scenario> sc = WithPdSplit(base, s.prefill, s.decode);
    if (!sc.ok()) continue;  // ran once already: cannot fail here
    sc = WithRate(*sc, r->target_rate);
    if (!sc.ok()) continue;
    RunSpec spec;
    spec.scenario = std::make_shared<const Scenario>(std::move(*sc));
    spec.keep_output = true;
    specs.push_back(std::move(spec));
    which.push_back(i);
  }
  std::vector<RunResult> runs = RunAll(specs, o.capacity.jobs, nullptr);
  for (size_t k = 0; k < runs.size(); ++k) {
    const SimulationInput in = specs[k].scenario->ToSimulationInput();
    const DisaggSummary d = SummarizeDisagg(*runs[k].output, in,
                                             DisaggDigest::FromOutput(*runs[k].output),
                                             runs[k].summary.percentiles);
    PdSplit& s = r->splits[which[k]];
    s.prefill_busy = d.prefill_busy;
    s.decode_busy = d.decode_busy;
    s.link_busy = d.link_busy;
    s.prefill_ms = d.prefill_ms.mean;
    s.decode_wait_ms = d.decode_wait_ms.mean;
    s.transfer_share_of_mean_ttft = d.transfer_share_of_mean_ttft;
  }
}

}  // namespace

StatusOr<PdSizingResult> SizePdSplit(const Scenario& base, const PdSizingOptions& o,
                                     PriceTable prices) {
  if (!base.disagg) {
    return Status::Error(base.file + ": P:D sizing needs a /disaggregation section");
  }
  if (Status st = CheckOpenLoop(base, "capacity"); !st.ok()) return st;
  if (!(o.target_rate > 0)) {
    return Status::Error(base.file + ": /disaggregation: a disaggregated deployment is sized "
                         "for a target rate: expected --target-rate R > 0 (requests/s into "
                         "the whole deployment)");
  }
  if (o.max_prefill < 1 || o.max_decode < 1) {
    return Status::Error("capacity: expected --max-prefill and --max-decode >= 1");
  }
  PdSizingResult r;
  r.slo = o.capacity.slo;
  r.target_rate = o.target_rate;
  r.prices = std::move(prices);
  r.prefill_gpu = base.disagg->prefill.gpu.name;
  r.decode_gpu = base.disagg->decode.gpu.name;
  r.prefill_tp = base.disagg->prefill.tp;
  r.decode_tp = base.disagg->decode.tp;
  r.splits = SplitsByCost(r, o);

  ProgressBar bar("P:D splits at " + Fmt("%g", o.target_rate) + " req/s", 0, 0);
  bar.SetUnit("splits");
  for (size_t i = 0; i < r.splits.size(); ++i) {
    PdSplit& s = r.splits[i];
    if (r.cheapest && !SameCost(s, r.splits[*r.cheapest])) break;
    StatusOr<Scenario> sc = WithPdSplit(base, s.prefill, s.decode);
    if (!sc.ok()) return sc.status();
    if (o.capacity.progress) bar.AddTotal(1);
    StatusOr<RateEvaluation> e = EvaluateRate(*sc, o.target_rate, o.capacity);
    if (!e.ok()) return e.status();
    if (o.capacity.progress) bar.RunDone();
    s.evaluated = true;
    s.at = *e;
    ++r.evaluations;
    if (e->feasible && !r.cheapest) r.cheapest = i;
  }
  bar.Finish();
  AddPoolFigures(base, o, &r);
  return r;
}

}  // namespace servesim
