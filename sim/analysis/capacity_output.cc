// Capacity table and report data (see capacity_plan.h).
#include <cmath>
#include <cstdio>
#include <string>

#include "sim/analysis/capacity_plan.h"
#include "sim/analysis/report_data.h"

namespace servesim {
namespace {

std::string Fmt(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

std::string SloText(const std::vector<SloTerm>& slo) {
  std::string s;
  for (const SloTerm& t : slo) {
    s += (s.empty() ? "" : ", ") + t.name + " <= " + Fmt("%g", t.limit_ms) + " ms";
  }
  return s;
}

nlohmann::json OrNull(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

}  // namespace

void WriteCapacityTable(const Scenario& sc, const CapacityPlan& p, std::ostream& os) {
  os << "servesim capacity: " << sc.file << " (" << sc.model.name << ", "
     << sc.ArrivalDescription() << " shape)\nSLO: " << SloText(p.slo)
     << "; a rate passes when every replication is stable and each SLO "
        "percentile's upper 95% bound is within its limit\n";
  if (p.target_rate > 0) {
    os << "target " << Fmt("%g", p.target_rate)
       << " req/s; replicas = ceil(target / max rate per replica), assuming "
          "an ideal router (even split, no imbalance)\n";
  }
  os << "prices: " << p.prices.file << " (" << p.prices.note << ")\n\n";
  char line[400];
  std::snprintf(line, sizeof line, "%-4s %-10s %3s | %11s | %11s %10s %9s | %5s %5s %9s %10s\n",
                "rank", "gpu", "tp", "saturation", "SLO max", "goodput", "$/M out",
                "repl", "gpus", "$/GPU-h", "fleet $/h");
  os << line;
  os << "                    | throughput  | latency-constrained (per replica)  | fleet\n";
  int rank = 0;
  for (const PlanRow& r : p.rows) {
    if (!r.fits) {
      std::snprintf(line, sizeof line, "%-4s %-10s %3d | does not fit\n", "-",
                    r.candidate.gpu.c_str(), r.candidate.tp);
      os << line;
      continue;
    }
    const auto cost = r.cost_per_million_output_tokens;
    std::snprintf(line, sizeof line,
                  "%-4d %-10s %3d | %9.3f/s | %9.3f/s %8.3f/s %9s | %5d %5d %9s %10s%s\n",
                  ++rank, r.candidate.gpu.c_str(), r.candidate.tp,
                  r.result.saturation.mu_rps, r.result.max_rate,
                  r.result.goodput_rps.mean, cost ? Fmt("%.3f", *cost).c_str() : "-",
                  r.replicas, r.gpus,
                  r.usd_per_gpu_hour ? Fmt("%.2f", *r.usd_per_gpu_hour).c_str() : "-",
                  r.usd_per_gpu_hour ? Fmt("%.2f", r.gpus * *r.usd_per_gpu_hour).c_str() : "-",
                  r.note.empty() ? "" : ("  (" + r.note + ")").c_str());
    os << line;
    for (const SloCheck& c : r.result.checks) {
      os << "       at the SLO max: " << c.name << " = " << Fmt("%.1f", c.value_ms.mean)
         << " ms [" << Fmt("%.1f", c.value_ms.lo) << ", " << Fmt("%.1f", c.value_ms.hi)
         << "] (limit " << Fmt("%g", c.limit_ms) << ")\n";
    }
  }
  for (const PlanRow& r : p.rows) {
    if (!r.fits) os << "\n" << r.candidate.gpu << ":" << r.candidate.tp << ": " << r.note;
  }
  os << "\nsaturation = throughput flat out, no SLO (never a latency answer); "
        "SLO max = highest arrival rate meeting the SLO; goodput = requests/s "
        "whose own TTFT/TPOT/E2E all meet the limits (vllm --goodput); $/M out "
        "= $ per million output tokens at the SLO max; ranked by "
     << (p.target_rate > 0 ? "fleet $/h for the target" : "$/M out") << "\n";
}

nlohmann::json CapacityReportJson(const Scenario& sc, const CapacityPlan& p) {
  nlohmann::json slo = nlohmann::json::object();
  for (const SloTerm& t : p.slo) slo[t.name + "_ms"] = t.limit_ms;
  nlohmann::json rows = nlohmann::json::array();
  for (const PlanRow& r : p.rows) {
    nlohmann::json row = {{"gpu", r.candidate.gpu}, {"tp", r.candidate.tp},
                          {"fits", r.fits}, {"note", r.note}};
    if (r.fits) {
      row["saturation_rps"] = r.result.saturation.mu_rps;
      row["max_rate_per_replica"] = r.result.max_rate;
      row["replicas"] = r.replicas;
      row["gpus"] = r.gpus;
      row["usd_per_gpu_hour"] = OrNull(r.usd_per_gpu_hour);
      row["cost_per_million_output_tokens"] = OrNull(r.cost_per_million_output_tokens);
      row["goodput_rps"] = r.result.goodput_rps.mean;
    }
    rows.push_back(row);
  }
  RunSummary ctx;
  ctx.percentiles = sc.metrics.percentiles;
  ctx.warmup_s = sc.metrics.warmup_s;
  ctx.warmup_requests = sc.metrics.warmup_requests;
  nlohmann::json data;
  data["title"] = "servesim capacity: " + sc.file;
  data["context"] = ContextJson(sc, ctx, sc.ArrivalDescription() + " (rate searched)",
                                "searched from 2% to 110% of saturation");
  data["context"].erase("prefix_hit_rate");  // differs per candidate and rate
  data["context"]["warmup"] = "warmup_s " + Fmt("%g", sc.metrics.warmup_s) +
                              ", warmup_requests " +
                              std::to_string(sc.metrics.warmup_requests);
  data["context"]["target_rate"] = p.target_rate;
  data["context"]["prices"] = p.prices.file + ": " + p.prices.note;
  data["capacity"] = {{"slo", slo}, {"rows", rows}};
  return data;
}

}  // namespace servesim
