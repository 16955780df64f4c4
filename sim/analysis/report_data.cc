// Shared report-data producers (see report_data.h).
#include "sim/analysis/report_data.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace servesim {
namespace {

nlohmann::json Cdf(std::vector<double> xs, int max_points) {
  nlohmann::json pts = nlohmann::json::array();
  if (xs.empty()) return pts;
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  const size_t step = std::max<size_t>(1, n / std::max(1, max_points));
  for (size_t i = step - 1; i < n; i += step) {
    pts.push_back({xs[i], static_cast<double>(i + 1) / n});
  }
  if (pts.back()[1].get<double>() < 1.0) pts.push_back({xs.back(), 1.0});
  return pts;
}

}  // namespace

nlohmann::json ContextJson(const Scenario& sc, const RunSummary& rs,
                           const std::string& arrival,
                           const std::string& utilization) {
  std::ostringstream warm;
  warm << "warmup_s " << rs.warmup_s << ", warmup_requests "
       << rs.warmup_requests << " (" << rs.excluded_warmup
       << " requests excluded in the representative run)";
  return {{"scenario", sc.file},
          {"model", sc.model.Label()},
          {"gpu", sc.gpu.name},
          {"tp", sc.tp},
          {"arrival", arrival},
          {"seed", sc.seed},
          {"percentiles", rs.percentiles},
          {"warmup", warm.str()},
          {"prefix_hit_rate", rs.token_hit_rate},
          {"utilization", utilization}};
}

nlohmann::json CdfsJson(const SimulationOutput& out, int max_points) {
  std::vector<double> ttft, tpot, e2el;
  for (const Request& r : out.requests) {
    if (!r.measured || r.status != RequestStatus::kFinished) continue;
    const double t = ToMillis(r.first_token - r.send);
    const double e = ToMillis(r.finish - r.send);
    ttft.push_back(t);
    e2el.push_back(e);
    if (r.output_len > 1) tpot.push_back((e - t) / (r.output_len - 1));
  }
  return {{"ttft_ms", Cdf(ttft, max_points)},
          {"tpot_ms", Cdf(tpot, max_points)},
          {"e2el_ms", Cdf(e2el, max_points)}};
}

nlohmann::json BatchSizeHistJson(const SimulationOutput& out) {
  // LogHistogram exposes percentiles only; the value at integer rank r is
  // Percentile(100 (r + 0.5) / (n - 1)) (the half keeps the floored rank
  // at r despite rounding), and ranks are sorted by value, so each
  // distinct value's run of ranks is found by binary search.
  const LogHistogram& h = out.recorder.steps().batch_size;
  nlohmann::json hist = nlohmann::json::array();
  const int64_t n = h.count();
  if (n == 0) return hist;
  if (n == 1) return nlohmann::json::array({{h.min(), 1}});
  auto at = [&](int64_t r) { return h.Percentile(100.0 * (r + 0.5) / (n - 1)); };
  int64_t r = 0;
  while (r < n) {
    const double v = at(r);
    int64_t lo = r, hi = n - 1;  // last rank with value v
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (at(mid) <= v) lo = mid; else hi = mid - 1;
    }
    hist.push_back({v, lo - r + 1});
    r = lo + 1;
  }
  return hist;
}

nlohmann::json TimeseriesJson(const SimulationOutput& out, double interval_s) {
  if (out.steps.empty() || !(interval_s > 0)) return nullptr;
  std::vector<const StepRecord*> steps;
  for (const StepRecord& r : out.steps) steps.push_back(&r);
  std::stable_sort(steps.begin(), steps.end(),
                   [](const StepRecord* a, const StepRecord* b) { return a->start < b->start; });
  int32_t replicas = 0;
  for (const StepRecord* r : steps) replicas = std::max(replicas, r->replica + 1);
  std::vector<const StepRecord*> latest(replicas, nullptr);
  std::vector<int64_t> total_blocks(replicas, 0);
  const SimTime dt = std::max<SimTime>(1, FromSeconds(interval_s));
  nlohmann::json t = nlohmann::json::array(), kv = t, waiting = t, running = t;
  size_t next = 0;
  for (SimTime at = 0; at <= steps.back()->start && t.size() < 100000; at += dt) {
    while (next < steps.size() && steps[next]->start <= at) {
      latest[steps[next]->replica] = steps[next];
      total_blocks[steps[next]->replica] = steps[next]->kv_blocks_total;
      ++next;
    }
    int64_t used = 0, all = 0, w = 0, run = 0;
    for (int32_t k = 0; k < replicas; ++k) {
      all += total_blocks[k];
      if (latest[k] == nullptr) continue;
      used += latest[k]->kv_blocks_used;
      w += latest[k]->num_waiting;
      run += latest[k]->num_running;
    }
    t.push_back(ToSeconds(at));
    kv.push_back(all > 0 ? static_cast<double>(used) / all : 0.0);
    waiting.push_back(w);
    running.push_back(run);
  }
  return {{"t_s", t}, {"kv_usage", kv}, {"waiting", waiting}, {"running", running}};
}


}  // namespace servesim
