// What `servesim serve` exposes on /metrics, under vLLM's metric names and
// bucket bounds (vllm/v1/metrics/loggers.py), in the Prometheus text format.
// Latencies are in wall seconds: simulated seconds / time_scale, what a
// client measures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim {

// A Prometheus histogram: counts per bucket (bounds ascending, then +Inf).
struct PromHistogram {
  std::vector<double> bounds;
  std::vector<int64_t> counts;  // bounds.size() + 1, not cumulative
  double sum = 0;
  int64_t count = 0;

  explicit PromHistogram(std::vector<double> b = {});
  void Observe(double v);
};

struct MetricsSnapshot {
  int64_t running = 0, waiting = 0;
  double kv_usage = 0;  // fraction of KV blocks held by requests, all replicas
  int64_t prompt_tokens = 0, generation_tokens = 0;
  int64_t prefix_queries = 0, prefix_hits = 0;  // prompt tokens, at admission
  int64_t preemptions = 0;
  int64_t finished_length = 0, finished_stop = 0;  // request_success by reason
  int64_t finished_abort = 0;  // ended because their clients went away
  int64_t admitted = 0;  // requests the engine took (any outcome)
  int64_t rejected = 0;  // the engine could never serve them (too long)
  int64_t cut_off = 0;   // cut off at shutdown (not finished by the drain)
  int64_t refused = 0;   // not admitted: the server was full
  PromHistogram ttft, itl, e2e, queue;
  double sim_time_s = 0;  // the simulated clock
  double lag_s = 0;       // wall seconds the engine was behind, last event
  double max_lag_s = 0;

  MetricsSnapshot();
};

std::string RenderPrometheus(const MetricsSnapshot& m, const std::string& model_name);

}  // namespace servesim
