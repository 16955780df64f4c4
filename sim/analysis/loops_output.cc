// Loops table, explanation and report data (see loops_output.h, loops.h).
#include "sim/analysis/loops_output.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/analysis/queueing.h"
#include "sim/analysis/report_data.h"
#include "sim/report/json_numbers.h"

namespace servesim {
namespace {

nlohmann::json KindJson(const PointStats& p) {
  nlohmann::json j = {{"ttft_p50_ms", FiniteOrNull(p.ttft_ms.p50.mean)},
                      {"ttft_p99_ms", FiniteOrNull(p.ttft_ms.p99.mean)},
                      {"queue_mean_ms", FiniteOrNull(p.queue_ms.mean.mean)},
                      {"stable_fraction", p.stable_fraction},
                      {"unstable", p.stable_fraction < 1}};
  if (p.stable_fraction < 1) j["unstable_reason"] = p.unstable_reason;
  return j;
}

// The busiest point the open loop still handled stably: where the contrast
// is largest without the open loop's numbers being run-length artefacts.
const LoopsPoint* Showcase(const LoopsResult& r) {
  const LoopsPoint* best = nullptr;
  for (const LoopsPoint& p : r.points) {
    if (p.open_poisson.stable_fraction == 1) best = &p;
  }
  return best ? best : (r.points.empty() ? nullptr : &r.points.front());
}

}  // namespace

std::string LoopsExplanation(const LoopsResult& r) {
  std::string s =
      "A closed-loop benchmark has N clients that each wait for an answer "
      "before sending the next request, so when the server slows down the "
      "clients slow down with it: the load throttles itself and the queue "
      "can never hold more than N requests. Real users arrive on their own "
      "schedule (an open loop): while the server is busy, newcomers keep "
      "arriving and queue. Queueing theory says how much: an M/M/1 queue "
      "at utilization rho waits rho/(1-rho) service times on average, so at "
      "90% utilization the open-loop wait is about 9x the service time, and "
      "it grows without bound as rho approaches 1. ";
  const LoopsPoint* p = Showcase(r);
  if (p == nullptr) return s;
  // Utilization is printed with the table's three digits, and the M/M/1
  // figure below is computed from the printed value, so a reader who
  // recomputes rho/(1-rho) gets the same number.
  const std::string rho_text = Fmt("%.3f", p->closed.utilization);
  const double rho = std::stod(rho_text);
  s += "Here, at N = " + std::to_string(p->concurrency) + " the closed loop ran " +
       Fmt("%.2f", p->throughput_rps) + " req/s (utilization " + rho_text +
       " of the saturation throughput) and reported a mean queueing delay of " +
       Fmt("%.1f", p->closed.queue_ms.mean.mean) + " ms and TTFT p99 " +
       Fmt("%.0f", p->closed.ttft_ms.p99.mean) +
       " ms; Poisson users at the same throughput waited " +
       Fmt("%.1f", p->open_poisson.queue_ms.mean.mean) + " ms on average (TTFT p99 " +
       Fmt("%.0f", p->open_poisson.ttft_ms.p99.mean) + " ms), bursty gamma users " +
       Fmt("%.1f", p->open_gamma.queue_ms.mean.mean) + " ms (TTFT p99 " +
       Fmt("%.0f", p->open_gamma.ttft_ms.p99.mean) + " ms). ";
  if (rho < 1) {
    s += "M/M/1 at utilization " + rho_text + " predicts a wait of " +
         Fmt("%.1f", MM1Wait(rho, 1.0)) + " service times. ";
  }
  s += "Benchmark with open-loop arrivals at the rate you expect, and read a "
       "closed-loop result as a throughput figure, not as user latency.";
  return s;
}

void WriteLoopsTable(const Scenario& sc, const LoopsResult& r, std::ostream& os) {
  os << "servesim loops: " << sc.file << " (" << sc.model.Label() << " on " << sc.tp
     << "x " << sc.gpu.name << "); saturation throughput "
     << Fmt("%.3f", r.saturation.mu_rps) << " req/s\n"
     << "closed loop of N clients (no think time) vs open loops at the "
        "throughput it achieved; means over replications, ms\n\n";
  char line[320];
  std::snprintf(line, sizeof line, "%6s %9s %6s | %-23s | %-23s | %-23s\n", "N",
                "thrpt/s", "util", "closed: queue p50 p99",
                "poisson: queue p50 p99",
                ("gamma(b=" + Fmt("%g", r.burstiness) + "): queue p50 p99").c_str());
  os << line;
  for (const LoopsPoint& p : r.points) {
    auto cell = [](const PointStats& k) {
      char c[64];
      std::snprintf(c, sizeof c, "%7.1f %7.1f %7.1f%s", k.queue_ms.mean.mean,
                    k.ttft_ms.p50.mean, k.ttft_ms.p99.mean,
                    k.stable_fraction < 1 ? "!" : " ");
      return std::string(c);
    };
    std::snprintf(line, sizeof line, "%6d %9.3f %6.3f | %-23s | %-23s | %-23s\n",
                  p.concurrency, p.throughput_rps, p.closed.utilization,
                  cell(p.closed).c_str(), cell(p.open_poisson).c_str(),
                  cell(p.open_gamma).c_str());
    os << line;
  }
  os << "(queue = mean queueing delay, p50/p99 = TTFT; ! = unstable, so the "
        "figure depends on the run length: the open loop's rate is at or above "
        "mu's lower 95% bound, or a run shorter than the M/M/1 relaxation time "
        "at that rate, or a replication's backlog grew)\n\n"
     << "What a closed-loop benchmark reports is the \"closed\" column.\n"
     << LoopsExplanation(r) << "\n";
}

nlohmann::json LoopsReportJson(const Scenario& sc, const LoopsResult& r) {
  const SaturationEstimate& sat = r.saturation;
  nlohmann::json points = nlohmann::json::array();
  for (const LoopsPoint& p : r.points) {
    const double rho = p.closed.utilization;
    points.push_back({{"concurrency", p.concurrency},
                      {"throughput_rps", p.throughput_rps},
                      {"utilization", rho},
                      {"mm1_wait_ms", FiniteOrNull(1e3 * MM1Wait(rho, sat.mean_service_s))},
                      {"mg1_wait_ms", FiniteOrNull(1e3 * MG1Wait(rho, sat.mean_service_s, sat.scv))},
                      {"closed", KindJson(p.closed)},
                      {"open_poisson", KindJson(p.open_poisson)},
                      {"open_gamma", KindJson(p.open_gamma)}});
  }
  // The single-server curves the text cites, on a grid of rho up to just
  // short of mu (where they diverge), for the page to draw beside the
  // simulated points.
  nlohmann::json mm1 = nlohmann::json::array(), mg1 = nlohmann::json::array();
  for (int i = 1; i <= 100; ++i) {
    const double rho = i < 98 ? i / 100.0 : 0.97 + 0.01 * (i - 97) / 2;  // to 0.985
    mm1.push_back({rho * sat.mu_rps, FiniteOrNull(1e3 * MM1Wait(rho, sat.mean_service_s))});
    mg1.push_back({rho * sat.mu_rps, FiniteOrNull(1e3 * MG1Wait(rho, sat.mean_service_s, sat.scv))});
  }
  RunSummary ctx;  // context fields the runs share
  ctx.percentiles = sc.metrics.percentiles;
  ctx.warmup_s = sc.metrics.warmup_s;
  ctx.warmup_requests = sc.metrics.warmup_requests;
  nlohmann::json data;
  data["title"] = "servesim loops: open vs closed loop, " + sc.file;
  data["context"] = ContextJson(
      sc, ctx,
      "closed loop of N clients vs Poisson and gamma(burstiness " +
          Fmt("%g", r.burstiness) + ") at the closed loop's throughput",
      "throughput / saturation throughput " + Fmt("%.3f", r.saturation.mu_rps) +
          " req/s");
  data["context"]["warmup"] = "warmup_s " + Fmt("%g", sc.metrics.warmup_s) +
                              ", warmup_requests " +
                              std::to_string(sc.metrics.warmup_requests);
  data["context"].erase("prefix_hit_rate");  // no single run to take it from
  data["loops"] = {{"points", points},
                   {"saturation_rps", sat.mu_rps},
                   {"mean_service_ms", 1e3 * sat.mean_service_s},
                   {"service_scv", sat.scv},
                   {"theory", {{"mm1_wait_ms", mm1}, {"mg1_wait_ms", mg1}}},
                   {"explanation", LoopsExplanation(r)}};
  return data;
}

}  // namespace servesim
