// Shared report-data producers (see report_data.h).
#include "sim/analysis/report_data.h"

#include <algorithm>
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
          {"model", sc.model.name},
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

nlohmann::json TimeseriesJson(const SimulationOutput& out, int num_gpu_blocks) {
  const TimeSeries& ts = out.recorder.time_series();
  if (ts.t_s.empty()) return nullptr;
  nlohmann::json kv = nlohmann::json::array();
  for (int64_t b : ts.kv_blocks_used) {
    kv.push_back(num_gpu_blocks > 0 ? static_cast<double>(b) / num_gpu_blocks : 0.0);
  }
  return {{"t_s", ts.t_s}, {"kv_usage", kv}, {"waiting", ts.waiting},
          {"running", ts.running}};
}


}  // namespace servesim
