// Scenario variants and replications (see runs.h).
#include "sim/analysis/runs.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>

namespace servesim {

Status CheckSomethingMeasured(const Scenario& sc, const RunSummary& summary) {
  if (summary.completed > 0 || summary.excluded_warmup == 0) return Status::Ok();
  const MetricsConfig& m = sc.metrics;
  const bool by_time = m.warmup_s > 0, by_count = m.warmup_requests > 0;
  std::ostringstream os;
  os << sc.file << ": "
     << (by_time && by_count ? "/metrics"
         : by_time           ? "/metrics/warmup_s"
                             : "/metrics/warmup_requests")
     << ": warm-up excludes every request: all " << summary.excluded_warmup
     << " finished requests arrived within the warm-up (";
  if (by_time) os << "warmup_s " << m.warmup_s << (by_count ? ", " : "");
  if (by_count) os << "warmup_requests " << m.warmup_requests;
  os << "), so nothing was measured; expected a warm-up shorter than the run "
        "(or more requests)";
  return Status::Error(os.str());
}

Status CheckOpenLoop(const Scenario& sc, const char* command) {
  if (sc.workload.closed_loop) {
    return Status::Error(sc.file + ": /workload/arrival: `" + command +
                         "` varies the arrival rate of open-loop traffic; "
                         "this scenario is a closed loop: use `servesim "
                         "loops` for closed vs open loops");
  }
  if (sc.OfferedRate() <= 0) {
    return Status::Error(sc.file + ": /workload: `" + command +
                         "` needs an open-loop arrival process with a rate; "
                         "expected poisson, gamma or constant arrivals, got " +
                         sc.ArrivalDescription());
  }
  return Status::Ok();
}

namespace {

std::mutex executor_mu;
RunExecutor executor;

}  // namespace

void SetRunExecutor(RunExecutor e) {
  std::lock_guard<std::mutex> lock(executor_mu);
  executor = std::move(e);
}

bool HasRunExecutor() {
  std::lock_guard<std::mutex> lock(executor_mu);
  return static_cast<bool>(executor);
}

RunResult RunOne(const RunSpec& spec) {
  RunExecutor e;
  {
    std::lock_guard<std::mutex> lock(executor_mu);
    e = executor;
  }
  if (e) {
    if (std::optional<RunResult> r = e(spec)) return std::move(*r);
  }
  return RunHere(spec);
}

RunResult RunHere(const RunSpec& spec) {
  const Scenario& sc = *spec.scenario;
  SimulationInput in = sc.ToSimulationInput();
  in.seed = sc.seed + static_cast<uint64_t>(spec.replication);
  std::vector<double>& ps = in.metrics.percentiles;
  for (double p : spec.extra_percentiles) {
    if (std::find(ps.begin(), ps.end(), p) == ps.end()) ps.push_back(p);
  }
  std::sort(ps.begin(), ps.end());
  if (spec.keep_output) in.record_steps = spec.record_steps;
  SimulationOutput out = RunSimulation(in);
  RunResult r;
  if (spec.truncate_warmup) {
    std::vector<SloMetric> metrics;
    for (const SloTerm& t : spec.slo) metrics.push_back(t.metric);
    r.truncation = TruncateWarmup(&out, metrics);
  }
  r.summary = Summarize(out, in, sc.ArrivalDescription(), sc.OfferedRate());
  if (spec.inspect) r.inspected = spec.inspect(out);
  if (spec.collect) r.collected = spec.collect(out);
  if (!spec.slo.empty()) {
    r.inspected = GoodShare(out.requests, spec.slo);
    r.collected = SloSamples(out.requests, spec.slo);
  }
  if (spec.saturation) {
    r.saturation = SaturationFromRequests(out.requests);
    r.saturation->requests = static_cast<int64_t>(out.requests.size());
  }
  if (spec.keep_output) r.output = std::move(out);
  return r;
}

std::vector<RunResult> RunAll(const std::vector<RunSpec>& specs, int jobs,
                              ProgressBar* bar) {
  std::vector<RunResult> results(specs.size());
  ParallelFor(
      static_cast<int>(specs.size()), jobs,
      [&](int i) { results[i] = RunOne(specs[i]); }, bar);
  return results;
}

double PercentileValue(const SampleStats& s, double p) {
  for (const auto& [q, v] : s.percentiles) {
    if (std::abs(q - p) < 1e-9) return v;
  }
  // A caller asked for a percentile it did not add to the run: a bug.
  std::cerr << "servesim: internal error: percentile " << p
            << " was not computed\n";
  std::abort();
}

}  // namespace servesim
