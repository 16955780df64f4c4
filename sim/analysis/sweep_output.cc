// Sweep table, CSV and report data (see sweep_output.h).
#include "sim/analysis/sweep_output.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/analysis/report_data.h"
#include "sim/report/json_numbers.h"

namespace servesim {
namespace {

// "123.4 [110.2, 140.9]": the estimate and its 95% interval (percentile
// intervals are log-scale, so not symmetric).
std::string Pm(const Interval& i, const char* fmt = "%.1f") {
  char m[32], lo[32], hi[32];
  std::snprintf(m, sizeof m, fmt, i.mean);
  if (i.n < 2) return m;
  std::snprintf(lo, sizeof lo, fmt, i.lo);
  std::snprintf(hi, sizeof hi, fmt, i.hi);
  return std::string(m) + " [" + lo + ", " + hi + "]";
}

std::string Col(const std::string& s, int width) {
  return s.size() >= static_cast<size_t>(width)
             ? s + " "
             : std::string(width - s.size(), ' ') + s + " ";
}

// A CSV field: quoted, inner quotes doubled (RFC 4180); empty stays empty.
std::string CsvQuoted(const std::string& text) {
  if (text.empty()) return text;
  std::string out = "\"";
  for (char ch : text)
    out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace

void WriteSweepTable(const Scenario& sc, const SweepResult& r, std::ostream& os) {
  const SaturationEstimate& s = r.saturation;
  char line[512];
  std::snprintf(line, sizeof line,
                "saturation throughput mu = %.3f req/s [%.3f, %.3f] (closed loop of %d "
                "clients, %lld requests, %lld departures over %.1f s%s); E[S] = 1/mu = "
                "%.2f ms, c^2 of inter-departure gaps = %.3f\n",
                s.mu_rps, s.mu.lo, s.mu.hi, s.clients, static_cast<long long>(s.requests),
                static_cast<long long>(s.departures), s.window_s,
                s.settled ? "" : ", NOT settled: its halves differ by > 5%",
                1e3 * s.mean_service_s, s.scv);
  os << "servesim sweep: " << sc.file << " (" << sc.model.Label() << " on "
     << sc.tp << "x " << sc.gpu.name << ", " << sc.ArrivalDescription()
     << " at each rate)\n" << line;
  os << "each point: " << (r.points.empty() ? 0 : r.points[0].replications)
     << " replications (seeds " << sc.seed << "...), estimate [95% CI]; "
     << "latencies in ms, queue = first scheduled - send; throughput over the "
        "arrival window after its first tenth (departures, so never above what "
        "the replica serves); rho = rate / mu; "
        "stable = replications whose backlog did not grow; rej/unf = measured "
        "requests rejected / unfinished, summed over replications; * = TTFT p99 > "
        "3x p50 there; MFU/MBU = model FLOPs / memory-bandwidth utilization over "
        "the window (- without a FLOP basis: the linear cost model)\n\n";
  os << Col("rate/s", 9) << Col("rho", 6) << Col("stable", 7) << Col("rej/unf", 9)
     << Col("thrpt/s", 22) << Col("TTFT p50", 24) << Col("TTFT p99", 26)
     << Col("TPOT p99", 22) << Col("E2E p99", 24) << Col("queue mean", 24)
     << Col("M/G/1", 9) << Col("M/M/1", 9) << Col("MFU/MBU", 10) << "\n";
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
    const size_t i = static_cast<size_t>(&p - r.points.data());
    const bool separated = i < r.tail_separated.size() && r.tail_separated[i];
    os << Col(rate, 9) << Col(util, 6) << Col(stable, 7)
       << Col(std::to_string(p.rejected) + "/" + std::to_string(p.unfinished), 9)
       << Col(Pm(p.throughput_rps, "%.2f"), 22) << Col(Pm(p.ttft_ms.p50), 24)
       << Col(Pm(p.ttft_ms.p99) + (separated ? "*" : " "), 26) << Col(Pm(p.tpot_ms.p99), 22)
       << Col(Pm(p.e2el_ms.p99, "%.0f"), 24) << Col(Pm(p.queue_ms.mean), 24)
       << Col(mg1, 9) << Col(mm1, 9)
       << Col(std::isfinite(p.mfu.mean) ? std::to_string(std::lround(100 * p.mfu.mean)) +
                                               "%/" +
                                               std::to_string(std::lround(100 * p.mbu.mean)) + "%"
                                         : std::string("-"),
              10)
       << (p.stable_fraction < 1 ? " UNSTABLE" : "") << "\n";
  }
  bool first_unstable = true;
  for (const PointStats& p : r.points) {
    if (p.stable_fraction >= 1) continue;
    if (first_unstable)
      os << "\nUNSTABLE (percentiles there depend on the run length):\n";
    first_unstable = false;
    std::snprintf(line, sizeof line, "  %.3f req/s (rho = %.2f): ", p.rate,
                  p.utilization);
    os << line << p.unstable_reason << "\n";
  }
  if (r.knee_rate) {
    std::snprintf(line, sizeof line,
                  "\nknee: TTFT p99 exceeds 3x its value at the lightest point "
                  "(%.1f ms) from %.3f req/s (rho = %.2f)\n",
                  r.baseline_p99_ms, *r.knee_rate, *r.knee_rate / s.mu_rps);
    os << line;
  } else if (r.points.size() > 1) {
    std::snprintf(line, sizeof line,
                  "\nknee: TTFT p99 stays within 3x its value at the lightest "
                  "point (%.1f ms) at every point\n",
                  r.baseline_p99_ms);
    os << line;
  }
  os << "M/G/1 and M/M/1: mean wait in queue for a single server with the "
        "moments above (exact for one request at a time; a reference only "
        "under continuous batching); UNSTABLE: the offered rate is at or above "
        "mu's lower 95% bound (no steady state at rho >= 1), or a "
        "replication's "
        "backlog grew over its arrival window (the stable column counts the "
        "replications that pass)\n";
}

void WriteSweepCsv(const SweepResult& r, std::ostream& os) {
  os << "rate,utilization,replications,stable_fraction";
  const char* cols[] = {"throughput_rps", "ttft_p50_ms", "ttft_p90_ms",
                        "ttft_p99_ms",    "tpot_p50_ms", "tpot_p90_ms",
                        "tpot_p99_ms",    "e2el_p50_ms", "e2el_p90_ms",
                        "e2el_p99_ms",    "queue_mean_ms"};
  for (const char* c : cols) os << "," << c << "," << c << "_lo," << c << "_hi";
  os << ",mg1_wait_ms,mm1_wait_ms,unstable,unstable_reason\n";
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
    os << "," << (std::isfinite(mg1) ? std::to_string(mg1) : "") << ","
       << (std::isfinite(mm1) ? std::to_string(mm1) : "") << ","
       << (p.stable_fraction < 1 ? 1 : 0) << "," << CsvQuoted(p.unstable_reason)
       << "\n";
  }
}

nlohmann::json SweepReportJson(const Scenario& sc, const SweepResult& r) {
  nlohmann::json points = nlohmann::json::array();
  nlohmann::json mm1 = nlohmann::json::array(), mg1 = nlohmann::json::array();
  for (const PointStats& p : r.points) {
    points.push_back(PointJson(p));
    mm1.push_back({p.rate, FiniteOrNull(SweepMM1WaitMs(r.saturation, p.rate))});
    mg1.push_back({p.rate, FiniteOrNull(SweepMG1WaitMs(r.saturation, p.rate))});
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
                   {"knee_definition",
                    "first rate whose TTFT p99 exceeds 3x its value at the lightest point"},
                   {"baseline_ttft_p99_ms", r.baseline_p99_ms},
                   {"ttft_p99_over_3x_p50", r.tail_separated},
                   {"points", points},
                   {"theory", {{"mm1_wait_ms", mm1}, {"mg1_wait_ms", mg1}}}};
  if (r.representative) {
    data["representative"] = {
        {"rate", r.representative_rate},
        {"utilization", r.saturation.mu_rps > 0 ? r.representative_rate / r.saturation.mu_rps : 0},
        {"replication", 0},
        {"seed", sc.seed}};
    data["cdfs"] = CdfsJson(*r.representative);
    data["batch_size_hist"] = BatchSizeHistJson(*r.representative);
    nlohmann::json ts = TimeseriesJson(*r.representative, r.timeseries_interval_s);
    if (!ts.is_null()) data["timeseries"] = ts;
  }
  return data;
}

}  // namespace servesim
