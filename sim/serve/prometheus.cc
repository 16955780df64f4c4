// Prometheus text rendering of the serve metrics (see prometheus.h).
#include "sim/serve/prometheus.h"

#include <algorithm>
#include <cstdio>

namespace servesim {

PromHistogram::PromHistogram(std::vector<double> b)
    : bounds(std::move(b)), counts(bounds.size() + 1, 0) {}

void PromHistogram::Observe(double v) {
  const size_t i = static_cast<size_t>(
      std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin());
  ++counts[i];  // le is inclusive: v == bound falls in that bucket
  sum += v;
  ++count;
}

// vLLM's buckets (v1 PrometheusStatLogger).
MetricsSnapshot::MetricsSnapshot()
    : ttft({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
            5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
      itl({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
           7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
           60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}),
      queue({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
             60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}) {}

namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void Header(std::string* s, const char* name, const char* type, const char* help) {
  *s += "# HELP ";
  *s += name;
  *s += " ";
  *s += help;
  *s += "\n# TYPE ";
  *s += name;
  *s += " ";
  *s += type;
  *s += "\n";
}

void Sample(std::string* s, const std::string& name, const std::string& labels, double v) {
  *s += name + "{" + labels + "} " + Num(v) + "\n";
}

void Gauge(std::string* s, const char* name, const char* help, const std::string& labels,
           double v) {
  Header(s, name, "gauge", help);
  Sample(s, name, labels, v);
}

// In the text format (as vLLM's prometheus_client writes it) a counter's
// HELP and TYPE lines name the sample, _total included: a parser otherwise
// reads an empty counter and an untyped sample.
void Counter(std::string* s, const char* name, const char* help, const std::string& labels,
             double v) {
  const std::string total = std::string(name) + "_total";
  Header(s, total.c_str(), "counter", help);
  Sample(s, total, labels, v);
}

void Histogram(std::string* s, const char* name, const char* help,
               const std::string& labels, const PromHistogram& h) {
  Header(s, name, "histogram", help);
  int64_t cumulative = 0;
  for (size_t i = 0; i <= h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    const std::string le = i < h.bounds.size() ? Num(h.bounds[i]) : "+Inf";
    Sample(s, std::string(name) + "_bucket", labels + ",le=\"" + le + "\"",
           static_cast<double>(cumulative));
  }
  Sample(s, std::string(name) + "_sum", labels, h.sum);
  Sample(s, std::string(name) + "_count", labels, static_cast<double>(h.count));
}

// A Prometheus label value: backslash, quote and newline escaped.
std::string LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string RenderPrometheus(const MetricsSnapshot& m, const std::string& model_name) {
  const std::string l = "model_name=\"" + LabelValue(model_name) + "\",engine=\"0\"";
  std::string s;
  Gauge(&s, "vllm:num_requests_running", "Requests in model execution batches.", l,
        static_cast<double>(m.running));
  Gauge(&s, "vllm:num_requests_waiting", "Requests waiting to be processed.", l,
        static_cast<double>(m.waiting));
  Gauge(&s, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", l,
        m.kv_usage);
  Counter(&s, "vllm:prefix_cache_queries",
          "Prefix cache queries, in terms of number of queried tokens.", l,
          static_cast<double>(m.prefix_queries));
  Counter(&s, "vllm:prefix_cache_hits",
          "Prefix cache hits, in terms of number of cached tokens.", l,
          static_cast<double>(m.prefix_hits));
  Counter(&s, "vllm:num_preemptions", "Cumulative number of preemptions.", l,
          static_cast<double>(m.preemptions));
  Counter(&s, "vllm:prompt_tokens", "Number of prefill tokens processed.", l,
          static_cast<double>(m.prompt_tokens));
  Counter(&s, "vllm:generation_tokens", "Number of generation tokens processed.", l,
          static_cast<double>(m.generation_tokens));
  Header(&s, "vllm:request_success_total", "counter",
         "Count of successfully processed requests.");
  Sample(&s, "vllm:request_success_total", l + ",finished_reason=\"length\"",
         static_cast<double>(m.finished_length));
  Sample(&s, "vllm:request_success_total", l + ",finished_reason=\"stop\"",
         static_cast<double>(m.finished_stop));
  // (vLLM labels every FinishReason: an abort is its client going away.)
  Sample(&s, "vllm:request_success_total", l + ",finished_reason=\"abort\"",
         static_cast<double>(m.finished_abort));
  Histogram(&s, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
            l, m.ttft);
  Histogram(&s, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
            l, m.itl);
  Histogram(&s, "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.", l, m.e2e);
  Histogram(&s, "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.", l, m.queue);
  // servesim's own: the simulated clock and whether it keeps up.
  Gauge(&s, "servesim:sim_time_seconds", "The simulated clock.", l, m.sim_time_s);
  Gauge(&s, "servesim:engine_lag_seconds",
        "Wall seconds the engine was behind the time scale at its last event.", l, m.lag_s);
  Gauge(&s, "servesim:engine_lag_max_seconds", "The largest engine lag so far, wall seconds.",
        l, m.max_lag_s);
  Counter(&s, "servesim:requests_rejected",
          "Requests the engine can never serve (prompt beyond the KV cache).", l,
          static_cast<double>(m.rejected));
  Counter(&s, "servesim:requests_cut_off", "Requests cut off at shutdown.", l,
          static_cast<double>(m.cut_off));
  Counter(&s, "servesim:requests_refused", "Requests refused because the server was full.", l,
          static_cast<double>(m.refused));
  return s;
}

}  // namespace servesim
