// Sweep table, CSV and report data (see sweep_output.h).
#include "sim/analysis/sweep_output.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/analysis/report_data.h"

namespace servesim {
namespace {

// "123.4 ±5.6": the mean and the half-width of its 95% interval.
std::string Pm(const Interval& i, const char* fmt = "%.1f") {
  char m[32], h[32];
  std::snprintf(m, sizeof m, fmt, i.mean);
  if (i.n < 2) return m;
  std::snprintf(h, sizeof h, fmt, (i.hi - i.lo) / 2);
  return std::string(m) + " ±" + h;
}

std::string Col(const std::string& s, int width) {
  return s.size() >= static_cast<size_t>(width)
             ? s + " "
             : std::string(width - s.size(), ' ') + s + " ";
}

nlohmann::json Num(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
}

}  // namespace

void WriteSweepTable(const Scenario& sc, const SweepResult& r, std::ostream& os) {
  const SaturationEstimate& s = r.saturation;
  char line[256];
  std::snprintf(line, sizeof line,
                "saturation throughput mu = %.3f req/s (closed loop of %d "
                "clients, %lld departures over %.1f s); E[S] = 1/mu = %.2f ms, "
                "c^2 of inter-departure gaps = %.3f\n",
                s.mu_rps, s.clients, static_cast<long long>(s.departures),
                s.window_s, 1e3 * s.mean_service_s, s.scv);
  os << "servesim sweep: " << sc.file << " (" << sc.model.name << " on "
     << sc.tp << "x " << sc.gpu.name << ", " << sc.ArrivalDescription()
     << " at each rate)\n" << line;
  os << "each point: " << (r.points.empty() ? 0 : r.points[0].replications)
     << " replications (seeds " << sc.seed << "...), mean ±95% CI half-width; "
     << "latencies in ms, queue = first scheduled - send\n\n";
  os << Col("rate/s", 9) << Col("util", 6) << Col("stable", 7)
     << Col("thrpt/s", 14) << Col("TTFT p50", 16) << Col("TTFT p99", 18)
     << Col("TPOT p99", 14) << Col("E2E p99", 18) << Col("queue mean", 16)
     << Col("M/G/1", 9) << Col("M/M/1", 9) << "\n";
  for (const PointStats& p : r.points) {
    char rate[32], util[32], stable[32], mg1[32], mm1[32];
    std::snprintf(rate, sizeof rate, "%.3f", p.rate);
    std::snprintf(util, sizeof util, "%.2f", p.utilization);
    std::snprintf(stable, sizeof stable, "%d/%d",
                  static_cast<int>(std::lround(p.stable_fraction * p.replications)),
                  p.replications);
    // Theory has no steady state at rho >= 1: print "inf", not nan.
    const double g = SweepMG1WaitMs(s, p.rate), m = SweepMM1WaitMs(s, p.rate);
    std::snprintf(mg1, sizeof mg1, std::isfinite(g) ? "%.1f" : "inf", g);
    std::snprintf(mm1, sizeof mm1, std::isfinite(m) ? "%.1f" : "inf", m);
    os << Col(rate, 9) << Col(util, 6) << Col(stable, 7)
       << Col(Pm(p.throughput_rps, "%.2f"), 14) << Col(Pm(p.ttft_ms.p50), 16)
       << Col(Pm(p.ttft_ms.p99), 18) << Col(Pm(p.tpot_ms.p99), 14)
       << Col(Pm(p.e2el_ms.p99, "%.0f"), 18) << Col(Pm(p.queue_ms.mean), 16)
       << Col(mg1, 9) << Col(mm1, 9)
       << (p.stable_fraction < 1 ? " UNSTABLE" : "") << "\n";
  }
  if (r.knee_rate) {
    std::snprintf(line, sizeof line,
                  "\nknee: TTFT p99 exceeds 3x p50 from %.3f req/s (%.0f%% of mu)\n",
                  *r.knee_rate, 100 * *r.knee_rate / s.mu_rps);
    os << line;
  } else {
    os << "\nknee: TTFT p99 stays within 3x p50 at every point\n";
  }
  os << "M/G/1 and M/M/1: mean wait in queue for a single server with the "
        "moments above (exact for one request at a time; a reference only "
        "under continuous batching); UNSTABLE: a replication's queue kept "
        "growing, its percentiles depend on the run length\n";
}

void WriteSweepCsv(const SweepResult& r, std::ostream& os) {
  os << "rate,utilization,replications,stable_fraction";
  const char* cols[] = {"throughput_rps", "ttft_p50_ms", "ttft_p90_ms",
                        "ttft_p99_ms",    "tpot_p50_ms", "tpot_p90_ms",
                        "tpot_p99_ms",    "e2el_p50_ms", "e2el_p90_ms",
                        "e2el_p99_ms",    "queue_mean_ms"};
  for (const char* c : cols) os << "," << c << "," << c << "_lo," << c << "_hi";
  os << ",mg1_wait_ms,mm1_wait_ms\n";
  for (const PointStats& p : r.points) {
    os << p.rate << "," << p.utilization << "," << p.replications << ","
       << p.stable_fraction;
    const Interval* vals[] = {&p.throughput_rps, &p.ttft_ms.p50, &p.ttft_ms.p90,
                              &p.ttft_ms.p99,    &p.tpot_ms.p50, &p.tpot_ms.p90,
                              &p.tpot_ms.p99,    &p.e2el_ms.p50, &p.e2el_ms.p90,
                              &p.e2el_ms.p99,    &p.queue_ms.mean};
    for (const Interval* i : vals) os << "," << i->mean << "," << i->lo << "," << i->hi;
    const double mg1 = SweepMG1WaitMs(r.saturation, p.rate);
    const double mm1 = SweepMM1WaitMs(r.saturation, p.rate);
    os << "," << (std::isfinite(mg1) ? std::to_string(mg1) : "")
       << "," << (std::isfinite(mm1) ? std::to_string(mm1) : "") << "\n";
  }
}

nlohmann::json SweepReportJson(const Scenario& sc, const SweepResult& r) {
  nlohmann::json points = nlohmann::json::array();
  nlohmann::json mm1 = nlohmann::json::array(), mg1 = nlohmann::json::array();
  for (const PointStats& p : r.points) {
    points.push_back(PointJson(p));
    mm1.push_back({p.rate, Num(SweepMM1WaitMs(r.saturation, p.rate))});
    mg1.push_back({p.rate, Num(SweepMG1WaitMs(r.saturation, p.rate))});
  }
  nlohmann::json data;
  data["title"] = "servesim sweep: " + sc.file;
  char util[160];
  std::snprintf(util, sizeof util,
                "rates as fractions of the saturation throughput mu = %.3f "
                "req/s (closed loop of %d clients)",
                r.saturation.mu_rps, r.saturation.clients);
  data["context"] = ContextJson(sc, r.representative_summary,
                                sc.ArrivalDescription() + " (rate varied)", util);
  data["sweep"] = {{"saturation_rps", r.saturation.mu_rps},
                   {"knee_rate", r.knee_rate ? nlohmann::json(*r.knee_rate)
                                             : nlohmann::json(nullptr)},
                   {"points", points},
                   {"theory", {{"mm1_wait_ms", mm1}, {"mg1_wait_ms", mg1}}}};
  if (r.representative) {
    data["cdfs"] = CdfsJson(*r.representative);
    data["batch_size_hist"] = BatchSizeHistJson(*r.representative);
    nlohmann::json ts = TimeseriesJson(*r.representative,
                                       r.representative_summary.num_gpu_blocks);
    if (!ts.is_null()) data["timeseries"] = ts;
  }
  return data;
}

}  // namespace servesim
