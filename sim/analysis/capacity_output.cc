// Capacity table and report data (see capacity_plan.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/report_data.h"
#include "sim/report/json_numbers.h"
#include "sim/report/writers.h"

namespace servesim {
namespace {

std::string SloText(const std::vector<SloTerm>& slo) {
  std::string s;
  for (const SloTerm& t : slo) {
    s += (s.empty() ? "" : ", ") + t.name + " <= " + Fmt("%g", t.limit_ms) + " ms";
  }
  return s;
}

void WriteValidation(const CapacityResult& c, std::ostream& os) {
  const ValidatedCapacity& v = *c.validated;
  os << "       validated: " << Fmt("%.3f", v.rate.mean) << "/s [" << Fmt("%.3f", v.rate.lo)
     << ", " << Fmt("%.3f", v.rate.hi) << "] (95%): a window of " << v.window_requests
     << " requests (" << Fmt("%.1f", v.window_hours) << " h at this rate, measured as "
     << "`servesim run` does) meets the SLO with probability " << Fmt("%g", 100 * v.share)
     << "%; " << v.windows.size() << " windows searched (" << v.runs << " runs, "
     << Fmt("%.1f", v.requests_simulated / 1e6) << " M requests), stopped: " << v.stopped
     << "; windows meeting it at the answer " << Fmt("%.0f", 100 * v.met_at_answer)
     << "%, at the lower end " << Fmt("%.0f", 100 * v.met_at_lower)
     << "%; screening answer " << Fmt("%.3f", c.screening_rate) << "/s\n";
}

nlohmann::json ValidationJson(const CapacityResult& c) {
  if (!c.validated) return nullptr;
  const ValidatedCapacity& v = *c.validated;
  nlohmann::json windows = nlohmann::json::array();
  for (const WindowThreshold& w : v.windows) {
    windows.push_back({{"seed", w.seed}, {"max_rate", w.rate},
                       {"fails_at", w.fails_at > 0 ? nlohmann::json(w.fails_at) : nlohmann::json(nullptr)},
                       {"runs", w.runs}, {"capped", w.capped}, {"floored", w.floored}});
  }
  return {{"method", "per-window threshold rates (bracketing search, common random numbers); "
                     "answer = their (1 - share) quantile, log-normal, 95% interval"},
          {"max_rate", IntervalJson(v.rate)},
          {"share", v.share},
          {"window_requests", v.window_requests},
          {"window_hours", v.window_hours},
          {"log_sd", v.log_sd},
          {"runs", v.runs},
          {"requests_simulated", v.requests_simulated},
          {"stopped", v.stopped},
          {"met_at_answer", v.met_at_answer},
          {"met_at_lower", v.met_at_lower},
          {"windows", windows}};
}

}  // namespace

nlohmann::json CapacityContextJson(const Scenario& sc, const std::string& arrival,
                                   const std::string& utilization, double target_rate,
                                   const PriceTable& prices) {
  RunSummary ctx;
  ctx.percentiles = sc.metrics.percentiles;
  ctx.warmup_s = sc.metrics.warmup_s;
  ctx.warmup_requests = sc.metrics.warmup_requests;
  nlohmann::json c = ContextJson(sc, ctx, arrival, utilization);
  c.erase("prefix_hit_rate");  // differs per candidate, split and rate
  c["warmup"] = "warmup_s " + Fmt("%g", sc.metrics.warmup_s) + ", warmup_requests " +
                std::to_string(sc.metrics.warmup_requests) +
                ", then MSER-5 on each replication";
  c["target_rate"] = target_rate;
  c["prices"] = prices.file + ": " + prices.note;
  return c;
}

nlohmann::json RateEvaluationJson(const RateEvaluation& e) {
  nlohmann::json slo = nlohmann::json::object();
  for (const SloCheck& c : e.checks) {
    slo[c.name] = {{"limit_ms", c.limit_ms}, {"value_ms", IntervalJson(c.value_ms)}};
  }
  return {{"rate", e.point.rate},
          {"utilization", e.point.utilization},
          {"feasible", e.feasible},
          {"stopped", RateStopName(e.stop)},
          {"replications", e.point.replications},
          {"requests_per_run", e.requests_per_run},
          {"mser5_warmup_requests_per_run", e.mean_truncated},
          {"ttft_drift_log_ratio", IntervalJson(e.drift)},
          {"rejected", e.rejected},
          {"unfinished", e.incomplete},
          {"slo", slo},
          {"point", PointJson(e.point)}};
}


void WriteCapacityTable(const Scenario& sc, const CapacityPlan& p, std::ostream& os) {
  os << "servesim capacity: " << sc.file << " (" << sc.model.Label() << ", "
     << sc.ArrivalDescription() << " shape)\nSLO: " << SloText(p.slo)
     << "; screening: a rate passes when every short replication is stable and "
        "each SLO percentile's upper 95% bound is within its limit; validated: "
        "the rate at which a long window meets the SLO with the stated probability\n";
  if (sc.check_invariants) {
    os << "invariants: KV-cache and scheduler checks after every step and the run-level "
          "invariants at the end of every simulation (--check-invariants); none failed\n";
  }
  if (p.target_rate > 0) {
    os << "target " << Fmt("%g", p.target_rate)
       << " req/s; replicas = ceil(target / lower 95% end of the max rate per "
          "replica), assuming an ideal router (even split, no imbalance)\n";
  }
  os << "prices: " << p.prices.file << " (" << p.prices.note << ")\n\n";
  char line[400];
  std::snprintf(line, sizeof line, "%-4s %-10s %3s | %-22s | %11s %5s %10s %9s | %5s %5s %9s %10s\n",
                "rank", "gpu", "tp", "saturation mu [95%]", "SLO max", "rho", "goodput",
                "$/M out", "repl", "gpus", "$/GPU-h", "fleet $/h");
  os << line;
  os << "                    | flat out, no SLO       | latency-constrained, per replica        | fleet\n";
  int rank = 0;
  for (const PlanRow& r : p.rows) {
    if (!r.fits) {
      std::snprintf(line, sizeof line, "%-4s %-10s %3s | does not fit (see below)\n", "-",
                    r.candidate.gpu.c_str(), r.candidate.Layout().c_str());
      os << line;
      continue;
    }
    const CapacityResult& c = r.result;
    const SaturationEstimate& mu = c.saturation;
    const auto cost = r.cost_per_million_output_tokens;
    const std::string sat = Fmt("%.2f", mu.mu_rps) + "/s [" + Fmt("%.2f", mu.mu.lo) + ", " +
                            Fmt("%.2f", mu.mu.hi) + "]";
    std::snprintf(line, sizeof line,
                  "%-4d %-10s %3s | %-22s | %9.3f/s %5.2f %8.3f/s %9s | %5lld %5lld %9s %10s%s\n",
                  ++rank, r.candidate.gpu.c_str(), r.candidate.Layout().c_str(), sat.c_str(), c.max_rate,
                  mu.mu_rps > 0 ? c.max_rate / mu.mu_rps : 0, c.at_max.goodput_rps.mean,
                  cost ? Fmt("%.3f", *cost).c_str() : "-", static_cast<long long>(r.replicas),
                  static_cast<long long>(r.gpus),
                  r.usd_per_gpu_hour ? Fmt("%.2f", *r.usd_per_gpu_hour).c_str() : "-",
                  r.usd_per_gpu_hour ? Fmt("%.2f", r.gpus * *r.usd_per_gpu_hour).c_str() : "-",
                  r.note.empty() ? "" : ("  (" + r.note + ")").c_str());
    os << line;
    if (c.validated) WriteValidation(c, os);
    const RateEvaluation& a = c.at_max;
    os << "       " << (c.validated ? "screening replications at " : a.feasible ? "at the SLO max " : "lowest rate tried ")
       << Fmt("%.3f", a.point.rate) << "/s: " << a.point.replications << " replications of "
       << (a.requests_per_run > 0 ? std::to_string(a.requests_per_run) + " requests"
                                  : std::string("the trace"))
       << " (stopped: " << RateStopName(a.stop) << "), MSER-5 warm-up "
       << Fmt("%.0f", a.mean_truncated) << " requests/run, " << a.rejected << " rejected, "
       << a.incomplete << " unfinished; saturating run " << mu.requests << " requests"
       << (mu.settled ? "" : " (NOT settled: its halves differ by > 5%)") << "\n";
    if (r.cost_per_million_output_tokens) {
      os << "       $ per million tokens at the SLO max: "
         << Fmt("%.3f", *r.cost_per_million_output_tokens) << " output only, "
         << (r.cost_per_million_input_tokens ? Fmt("%.3f", *r.cost_per_million_input_tokens)
                                             : std::string("-"))
         << " input only, " << Fmt("%.3f", *r.cost_per_million_tokens)
         << " all tokens (the replica-hour charged to each in turn)\n";
    }
    for (const SloCheck& k : a.checks) {
      os << "         " << k.name << " = " << Fmt("%.1f", k.value_ms.mean) << " ms ["
         << Fmt("%.1f", k.value_ms.lo) << ", " << Fmt("%.1f", k.value_ms.hi) << "] (limit "
         << Fmt("%g", k.limit_ms) << ")\n";
    }
    if (c.where == BisectionResult::Where::kInside && !c.validated) {
      os << "       next rate up, " << Fmt("%.3f", c.infeasible_rate) << "/s, fails\n";
    }
    if (r.cost_error.known()) {
      const double e = r.cost_error.worst();
      os << "       margin: step costs +/-" << Fmt("%.1f", 100 * e) << "% ("
         << r.cost_error.source << "); if every step is " << Fmt("%.1f", 100 * e)
         << "% slower the SLO max is "
         << (r.max_rate_if_slower > 0 ? Fmt("%.3f", r.max_rate_if_slower) + "/s"
                                      : std::string("below every rate tried"))
         << " (time scaling of the rates evaluated)";
      if (p.target_rate > 0 && r.max_rate_if_slower > 0) {
        const int64_t n = ReplicasFor(p.target_rate, r.max_rate_if_slower);
        os << ", " << n << (n == 1 ? " replica" : " replicas") << " for the target";
      }
      os << "\n";
    } else {
      os << "       margin: unknown (the cost model's constants are set by hand)\n";
    }
  }
  for (const PlanRow& r : p.rows) {
    if (!r.fits) os << "\n" << r.candidate.gpu << ":" << r.candidate.Layout() << ": " << r.note;
  }
  os << "\nsaturation mu = throughput flat out, no SLO (never a latency answer), "
        "with its 95% interval (batch means); SLO max = highest arrival rate "
        "meeting the SLO, searched up to mu's lower bound; rho = SLO max / mu; "
        "throughput and goodput over the arrival window (no drain); goodput = requests/s "
        "whose own TTFT/TPOT/E2E all meet the limits (vllm --goodput); $/M out "
        "= $ per million output tokens at the SLO max; ranked by "
     << (p.target_rate > 0 ? "fleet $/h for the target" : "$/M out") << "\n";
  if (std::any_of(p.rows.begin(), p.rows.end(),
                  [](const PlanRow& r) { return r.candidate.pp > 1; })) {
    os << "tp 2x2 = tensor parallelism 2 in each of 2 pipeline stages (gpus counts "
          "both)\n";
  }
}

nlohmann::json CapacityReportJson(const Scenario& sc, const CapacityPlan& p) {
  nlohmann::json slo = nlohmann::json::object();
  for (const SloTerm& t : p.slo) slo[t.name + "_ms"] = t.limit_ms;
  nlohmann::json rows = nlohmann::json::array();
  for (const PlanRow& r : p.rows) {
    nlohmann::json row = {{"gpu", r.candidate.gpu}, {"tp", r.candidate.tp},
                          {"fits", r.fits}, {"note", r.note}};
    if (r.candidate.pp > 1) row["pp"] = r.candidate.pp;  // pipeline stages of tp GPUs
    if (!r.detail.empty()) row["detail"] = r.detail;
    if (r.fits) {
      const CapacityResult& c = r.result;
      row["saturation_rps"] = c.saturation.mu_rps;
      row["saturation_ci"] = IntervalJson(c.saturation.mu);
      row["saturation_settled"] = c.saturation.settled;
      row["saturation_run_requests"] = c.saturation.requests;
      row["max_rate_per_replica"] = c.max_rate;
      row["max_rate_per_replica_lo"] = c.max_rate_lo;
      row["screening_max_rate"] = c.screening_rate;
      row["validation"] = ValidationJson(c);
      row["utilization_at_max"] = c.saturation.mu_rps > 0 ? c.max_rate / c.saturation.mu_rps : 0;
      row["replicas"] = r.replicas;
      row["gpus"] = r.gpus;
      row["usd_per_gpu_hour"] = OrNull(r.usd_per_gpu_hour);
      row["fleet_usd_per_hour"] =
          r.usd_per_gpu_hour ? nlohmann::json(r.gpus * *r.usd_per_gpu_hour) : nlohmann::json(nullptr);
      row["cost_per_million_output_tokens"] = OrNull(r.cost_per_million_output_tokens);
      row["cost_per_million_input_tokens"] = OrNull(r.cost_per_million_input_tokens);
      row["cost_per_million_tokens"] = OrNull(r.cost_per_million_tokens);
      row["goodput_rps"] = IntervalJson(c.at_max.goodput_rps);
      row["at_max"] = RateEvaluationJson(c.at_max);
      row["cost_model_error"] = CostErrorJson(r.cost_error);
      row["max_rate_if_steps_slower"] =
          r.cost_error.known() ? nlohmann::json(r.max_rate_if_slower) : nlohmann::json(nullptr);
      nlohmann::json trail = nlohmann::json::array();
      for (const RateEvaluation& e : c.trail) trail.push_back(RateEvaluationJson(e));
      row["evaluations"] = trail;
    }
    rows.push_back(row);
  }
  nlohmann::json data;
  data["title"] = "servesim capacity: " + sc.file;
  data["context"] = CapacityContextJson(sc, sc.ArrivalDescription() + " (rate searched)",
                                        "searched from 2% of saturation to its lower 95% bound",
                                        p.target_rate, p.prices);
  // Each row names its own hardware (the candidates replace the scenario's).
  data["context"]["gpu"] = "per row";
  data["context"].erase("tp");
  data["capacity"] = {{"slo", slo}, {"rows", rows}};
  return data;
}

}  // namespace servesim
