// Measured run vs servesim's replay of it (see measured_run.h).
#include "sim/analysis/measured_run.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/core/paths.h"
#include "sim/metrics/stats.h"
#include "sim/report/format.h"

namespace servesim {
namespace {

// A number field of one record, or an error naming the line and field.
StatusOr<double> NumberField(const nlohmann::json& j, const std::string& key,
                             const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) {
    return Status::Error(where + ": missing \"" + key + "\"; expected a number");
  }
  if (!it->is_number()) {
    return Status::Error(where + ": \"" + key + "\" is " + it->dump() +
                         "; expected a number");
  }
  const double v = it->get<double>();
  if (!std::isfinite(v)) {
    return Status::Error(where + ": \"" + key + "\" is not finite");
  }
  return v;
}

// One record of the measured log.
StatusOr<RequestLatency> ParseRecord(const std::string& text,
                                     const MeasuredFields& f,
                                     const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return Status::Error(where + ": not a JSON object; expected one request per line");
  }
  if (!j.is_object()) {
    return Status::Error(where + ": not a JSON object; expected one request per line");
  }
  double v[5];
  const std::string* keys[5] = {&f.prompt_tokens, &f.output_tokens, &f.queued,
                                &f.first_token, &f.last_token};
  for (int i = 0; i < 5; ++i) {
    StatusOr<double> x = NumberField(j, *keys[i], where);
    if (!x.ok()) return x.status();
    v[i] = x.value();
  }
  for (int i = 0; i < 2; ++i) {
    if (v[i] < 1 || v[i] != std::floor(v[i])) {
      return Status::Error(where + ": \"" + *keys[i] + "\" is " + Fmt("%g", v[i]) +
                           "; expected a whole number of tokens >= 1");
    }
  }
  if (v[3] < v[2] || v[4] < v[3]) {
    return Status::Error(where + ": timestamps out of order (" + f.queued + " " +
                         Fmt("%.6f", v[2]) + ", " + f.first_token + " " +
                         Fmt("%.6f", v[3]) + ", " + f.last_token + " " +
                         Fmt("%.6f", v[4]) + "); expected queued <= first <= last");
  }
  RequestLatency r;
  r.prompt_tokens = static_cast<int64_t>(v[0]);
  r.output_tokens = static_cast<int64_t>(v[1]);
  r.start_s = v[2];
  r.ttft_s = v[3] - v[2];
  r.e2e_s = v[4] - v[2];
  if (r.output_tokens > 1) r.tpot_s = (v[4] - v[3]) / (r.output_tokens - 1);
  if (auto it = j.find(f.scheduled); it != j.end() && it->is_number()) {
    const double sched = it->get<double>();
    if (!(sched >= v[2] && sched <= v[3])) {
      return Status::Error(where + ": \"" + f.scheduled + "\" " + Fmt("%.6f", sched) +
                           " is outside [" + f.queued + ", " + f.first_token +
                           "]; expected the first scheduling between them");
    }
    r.scheduled_s = sched - v[2];
  }
  if (auto it = j.find(f.arrival); it != j.end() && it->is_number()) {
    r.queued_minus_arrival_s = v[2] - it->get<double>();
  }
  return r;
}

struct Column {
  std::vector<double> ttft, tpot, e2e;  // ms
  double makespan_s = 0, output_tokens = 0;
};

Column ColumnOf(const std::vector<RequestLatency>& rs) {
  Column c;
  double first = std::numeric_limits<double>::infinity();
  double last = -first;
  for (const RequestLatency& r : rs) {
    c.ttft.push_back(1e3 * r.ttft_s);
    if (r.tpot_s >= 0) c.tpot.push_back(1e3 * r.tpot_s);
    c.e2e.push_back(1e3 * r.e2e_s);
    first = std::min(first, r.start_s);
    last = std::max(last, r.start_s + r.e2e_s);
    c.output_tokens += static_cast<double>(r.output_tokens);
  }
  c.makespan_s = rs.empty() ? 0 : last - first;
  return c;
}

double MeanOrZero(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double Pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double ma = MeanOrZero(a), mb = MeanOrZero(b);
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

double MedianApePct(const std::vector<double>& measured,
                    const std::vector<double>& predicted) {
  std::vector<double> ape;
  for (size_t i = 0; i < measured.size(); ++i) {
    if (measured[i] > 0) {
      ape.push_back(100 * std::fabs(predicted[i] - measured[i]) / measured[i]);
    }
  }
  std::sort(ape.begin(), ape.end());
  return ape.empty() ? 0 : PercentileOfSorted(ape, 50);
}

// Per bucket of kBucketS from the first arrival: output tokens per second,
// and (when every request has a scheduled time) requests running, as the
// time average over the bucket.
struct OverTime {
  std::vector<double> tokens_per_s, running;
};

OverTime OverTimeOf(const std::vector<RequestLatency>& rs) {
  const double bucket = RunComparison::kBucketS;
  double t0 = std::numeric_limits<double>::infinity(), end = 0;
  bool scheduled = true;
  for (const RequestLatency& r : rs) {
    t0 = std::min(t0, r.start_s);
    scheduled &= r.scheduled_s >= 0;
  }
  for (const RequestLatency& r : rs) end = std::max(end, r.start_s + r.e2e_s - t0);
  const size_t n = static_cast<size_t>(end / bucket) + 1;
  OverTime o;
  o.tokens_per_s.assign(n, 0);
  if (scheduled) o.running.assign(n, 0);
  // Adds `weight` per second over [a, b) to the buckets it overlaps.
  auto spread = [&](std::vector<double>& v, double a, double b, double weight) {
    for (size_t i = static_cast<size_t>(a / bucket); i < n && i * bucket < b; ++i) {
      const double lo = std::max(a, i * bucket), hi = std::min(b, (i + 1) * bucket);
      if (hi > lo) v[i] += weight * (hi - lo) / bucket;
    }
  };
  for (const RequestLatency& r : rs) {
    const double first = r.start_s - t0 + r.ttft_s, last = r.start_s - t0 + r.e2e_s;
    const size_t first_bucket = std::min(n - 1, static_cast<size_t>(first / bucket));
    if (r.output_tokens > 1 && last > first) {
      o.tokens_per_s[first_bucket] += 1 / bucket;  // the first token
      spread(o.tokens_per_s, first, last, (r.output_tokens - 1) / (last - first));
    } else {
      o.tokens_per_s[first_bucket] += static_cast<double>(r.output_tokens) / bucket;
    }
    if (scheduled) spread(o.running, r.start_s - t0 + r.scheduled_s, last, 1);
  }
  return o;
}

// Mean over the measured buckets of |p - m|, as % of the mean of m.
double OverTimeErrorPct(const std::vector<double>& m, const std::vector<double>& p) {
  double diff = 0, sum = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    diff += std::fabs((i < p.size() ? p[i] : 0) - m[i]);
    sum += m[i];
  }
  return sum > 0 ? 100 * diff / sum : 0;
}

// Mean, p50, p90, p99 of one latency, both sides.
void AddLatencyRows(const char* name, std::vector<double> m,
                    std::vector<double> p, std::vector<ValidationRow>* rows) {
  rows->push_back({std::string(name) + " mean", "ms", MeanOrZero(m), MeanOrZero(p)});
  std::sort(m.begin(), m.end());
  std::sort(p.begin(), p.end());
  for (double q : {50.0, 90.0, 99.0}) {
    rows->push_back({std::string(name) + " p" + Fmt("%.0f", q), "ms",
                     PercentileOfSorted(m, q), PercentileOfSorted(p, q)});
  }
}

// The measured front end's delay (RunComparison::frontend_delay_*), when
// every record has an arrival time.
void FrontendDelay(const std::vector<RequestLatency>& rs, RunComparison* c) {
  std::vector<double> d, prompts;
  for (const RequestLatency& r : rs) {
    if (std::isnan(r.queued_minus_arrival_s)) return;
    d.push_back(r.queued_minus_arrival_s);
    prompts.push_back(static_cast<double>(r.prompt_tokens));
  }
  if (d.size() < 2) return;
  const double offset = *std::min_element(d.begin(), d.end());
  for (double& x : d) x = 1e3 * (x - offset);
  c->frontend_delay_prompt_correlation = Pearson(d, prompts);
  std::sort(d.begin(), d.end());
  c->frontend_delay_p50_ms = PercentileOfSorted(d, 50);
  c->frontend_delay_p90_ms = PercentileOfSorted(d, 90);
}

}  // namespace

double ValidationRow::error_pct() const {
  return measured != 0 ? 100 * (predicted - measured) / measured : 0;
}

StatusOr<std::vector<RequestLatency>> ReadMeasuredRequests(
    const std::string& path, const MeasuredFields& fields) {
  const std::string resolved = ResolveDataPath(path);
  std::ifstream in(resolved);
  if (!in) {
    return Status::Error(path + ": cannot be opened; expected a JSON-lines log of measured requests");
  }
  std::vector<RequestLatency> out;
  std::string line;
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    StatusOr<RequestLatency> r =
        ParseRecord(line, fields, path + ":" + std::to_string(n));
    if (!r.ok()) return r.status();
    out.push_back(r.value());
  }
  if (in.bad()) return Status::Error(path + ": read error at line " + std::to_string(n + 1));
  if (out.empty()) return Status::Error(path + ": no requests; expected one JSON object per line");
  return out;
}

StatusOr<std::vector<RequestLatency>> SimulatedRequests(
    const SimulationOutput& out) {
  std::vector<RequestLatency> rs;
  for (size_t i = 0; i < out.requests.size(); ++i) {
    const Request& q = out.requests[i];
    if (q.status != RequestStatus::kFinished) {
      return Status::Error("request " + std::to_string(q.id) +
                           " did not finish in the simulation (rejected or "
                           "cut off); expected every measured request to finish");
    }
    RequestLatency r;
    r.prompt_tokens = q.prompt_len;
    r.output_tokens = q.output_len;
    r.start_s = ToSeconds(q.engine_arrival);
    r.scheduled_s = ToSeconds(q.first_scheduled - q.engine_arrival);
    r.ttft_s = ToSeconds(q.first_token - q.engine_arrival);
    r.e2e_s = ToSeconds(q.last_token - q.engine_arrival);
    if (q.output_len > 1) {
      r.tpot_s = ToSeconds(q.last_token - q.first_token) / (q.output_len - 1);
    }
    rs.push_back(r);
  }
  return rs;
}

StatusOr<RunComparison> CompareRequests(
    const std::vector<RequestLatency>& measured,
    const std::vector<RequestLatency>& predicted) {
  if (measured.size() != predicted.size()) {
    return Status::Error("the measured log has " + std::to_string(measured.size()) +
                         " requests and the replay " + std::to_string(predicted.size()) +
                         "; expected the same requests");
  }
  for (size_t i = 0; i < measured.size(); ++i) {
    if (measured[i].prompt_tokens != predicted[i].prompt_tokens ||
        measured[i].output_tokens != predicted[i].output_tokens) {
      return Status::Error(
          "request " + std::to_string(i) + ": measured " +
          std::to_string(measured[i].prompt_tokens) + "/" +
          std::to_string(measured[i].output_tokens) + " tokens, replayed " +
          std::to_string(predicted[i].prompt_tokens) + "/" +
          std::to_string(predicted[i].output_tokens) +
          " (prompt/output); expected the replay to read the measured requests in order");
    }
  }
  const Column m = ColumnOf(measured), p = ColumnOf(predicted);
  RunComparison c;
  c.requests = static_cast<int64_t>(measured.size());
  AddLatencyRows("TTFT", m.ttft, p.ttft, &c.rows);
  AddLatencyRows("TPOT", m.tpot, p.tpot, &c.rows);
  AddLatencyRows("E2E", m.e2e, p.e2e, &c.rows);
  c.rows.push_back({"makespan", "s", m.makespan_s, p.makespan_s});
  c.rows.push_back({"output throughput", "tok/s", m.output_tokens / m.makespan_s,
                    p.output_tokens / p.makespan_s});
  c.ttft_median_ape_pct = MedianApePct(m.ttft, p.ttft);
  c.e2e_median_ape_pct = MedianApePct(m.e2e, p.e2e);
  c.ttft_correlation = Pearson(m.ttft, p.ttft);
  c.e2e_correlation = Pearson(m.e2e, p.e2e);
  FrontendDelay(measured, &c);
  const OverTime mt = OverTimeOf(measured), pt = OverTimeOf(predicted);
  c.throughput_over_time_error_pct = OverTimeErrorPct(mt.tokens_per_s, pt.tokens_per_s);
  if (!mt.running.empty() && !pt.running.empty()) {
    c.running_over_time_error_pct = OverTimeErrorPct(mt.running, pt.running);
  }
  return c;
}

Status AddPeerErrors(const std::string& path, RunComparison* c) {
  std::ifstream in(ResolveDataPath(path));
  if (!in) return Status::Error(path + ": cannot be opened; expected a peer summary");
  std::string line;
  int64_t n = 0, matched = 0;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream ls(line);
    std::string name, stat, diff;
    double measured = 0, simulated = 0;
    if (!(ls >> name >> stat >> measured >> simulated)) continue;  // headers
    // The peer's own printed error when the line has one ("-1.0%"), else
    // computed from its rounded values.
    double peer_pct = 100 * (simulated - measured) / measured;
    if (ls >> diff && diff.size() > 1 && diff.back() == '%') {
      try {
        peer_pct = std::stod(diff.substr(0, diff.size() - 1));
      } catch (const std::exception&) {
      }
    }
    const std::string metric = name == "Latency" ? "E2E" : name;
    std::string suffix = stat == "Mean" ? " mean" : stat == "Median" ? " p50" : "";
    if (suffix.empty() && stat.size() > 1 && stat[0] == 'P') suffix = " p" + stat.substr(1);
    for (ValidationRow& r : c->rows) {
      if (r.metric != metric + suffix) continue;
      // The summary prints one decimal.
      if (std::fabs(measured - r.measured) > std::max(0.051, 1e-3 * std::fabs(r.measured))) {
        return Status::Error(path + ":" + std::to_string(n) + ": " + name + " " + stat +
                             " measured " + Fmt("%.1f", measured) + ", the log gives " +
                             Fmt("%.1f", r.measured) +
                             "; expected the peer's comparison of the same run");
      }
      r.peer_error_pct = peer_pct;
      ++matched;
    }
  }
  if (matched == 0) {
    return Status::Error(path + ": no \"TTFT|TPOT|Latency Mean|Median|P<n> <measured> "
                         "<simulated>\" line matched; expected a peer summary");
  }
  c->peer = path;
  return Status::Ok();
}

std::string ComparisonTable(const RunComparison& c) {
  std::ostringstream os;
  char buf[160];
  const bool peer = !c.peer.empty();
  std::snprintf(buf, sizeof buf, "  %-18s %-6s %12s %12s %9s%s\n", "metric", "unit",
                "measured", "predicted", "error", peer ? "  peer error" : "");
  os << buf;
  for (const ValidationRow& r : c.rows) {
    std::snprintf(buf, sizeof buf, "  %-18s %-6s %12.1f %12.1f %+8.1f%%",
                  r.metric.c_str(), r.unit.c_str(), r.measured, r.predicted,
                  r.error_pct());
    os << buf;
    if (peer && !std::isnan(r.peer_error_pct)) {
      std::snprintf(buf, sizeof buf, "  %+9.1f%%", r.peer_error_pct);
      os << buf;
    }
    os << "\n";
  }
  std::snprintf(buf, sizeof buf,
                "per request (%lld): median |error| TTFT %.1f%%, E2E %.1f%%; "
                "correlation TTFT %.3f, E2E %.3f\n",
                static_cast<long long>(c.requests), c.ttft_median_ape_pct,
                c.e2e_median_ape_pct, c.ttft_correlation, c.e2e_correlation);
  os << buf;
  std::snprintf(buf, sizeof buf,
                "over time (%.0f s buckets from the first arrival): output "
                "tok/s off by %.1f%% of its mean",
                RunComparison::kBucketS, c.throughput_over_time_error_pct);
  os << buf;
  if (c.running_over_time_error_pct >= 0) {
    std::snprintf(buf, sizeof buf, ", requests running by %.1f%%",
                  c.running_over_time_error_pct);
    os << buf;
  }
  os << "\n";
  if (!std::isnan(c.frontend_delay_p50_ms)) {
    std::snprintf(buf, sizeof buf,
                  "measured front end to engine (queued - arrival, less the "
                  "smallest): p50 %.1f ms, p90 %.1f ms; correlation with prompt "
                  "length %.2f\n",
                  c.frontend_delay_p50_ms, c.frontend_delay_p90_ms,
                  c.frontend_delay_prompt_correlation);
    os << buf;
  }
  return os.str();
}

}  // namespace servesim
