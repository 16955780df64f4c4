// Per-class summary (see class_summary.h).
#include "sim/report/class_summary.h"

namespace servesim {

std::vector<ClassSummary> SummarizeClasses(const SimulationOutput& out,
                                           const SimulationInput& in,
                                           double duration_s) {
  RequestDigest d(in);
  for (const Request& r : out.requests) d.Add(r);
  return SummarizeClasses(d, in, duration_s);
}

std::vector<ClassSummary> SummarizeClasses(const RequestDigest& d,
                                           const SimulationInput& in,
                                           double duration_s) {
  const RequestClasses& classes = in.workload.classes;
  std::vector<ClassSummary> cs(classes.size());
  double total_share = 0;
  for (const RequestClass& c : classes) total_share += c.share;
  const std::vector<double>& ps = in.metrics.percentiles;
  const OutcomeTable& done = d.outcomes;
  std::vector<double> buf;  // one metric of one class at a time
  for (size_t k = 0; k < cs.size(); ++k) {
    ClassSummary& c = cs[k];
    c.name = classes[k].name;
    c.share = classes[k].share / total_share;
    c.priority = classes[k].priority;
    c.ttft_slo_ms = classes[k].ttft_slo_s * 1e3;
    c.tpot_slo_ms = classes[k].tpot_slo_s * 1e3;
    const ClassCounts& n = d.classes[k];
    c.created = n.created;
    c.completed = n.completed;
    c.excluded_warmup = n.excluded_warmup;
    c.rejected = n.rejected;
    c.failed = n.failed;
    c.unfinished = n.unfinished;
    c.input_tokens = n.input_tokens;
    c.output_tokens = n.output_tokens;
    c.preemptions = n.preemptions;
    const int32_t cls = static_cast<int32_t>(k);
    buf.clear();
    for (size_t i = 0; i < done.size(); ++i) {
      const RequestOutcome o = done[i];
      if (o.request_class != cls) continue;
      const double ttft = ToMillis(o.first_token - o.send);
      double tpot = 0;  // vLLM: 0 for a one-token answer
      if (o.output_len > 1) tpot = ToMillis(o.finish - o.first_token) / (o.output_len - 1);
      const bool ttft_ok = c.ttft_slo_ms <= 0 || ttft <= c.ttft_slo_ms;
      const bool tpot_ok = c.tpot_slo_ms <= 0 || tpot <= c.tpot_slo_ms;
      c.good += ttft_ok && tpot_ok;
      buf.push_back(ttft);
    }
    c.ttft_ms = Summarize(buf, ps);
    buf.clear();
    for (size_t i = 0; i < done.size(); ++i) {
      const RequestOutcome o = done[i];
      if (o.request_class == cls && o.output_len > 1) {
        buf.push_back(ToMillis(o.finish - o.first_token) / (o.output_len - 1));
      }
    }
    c.tpot_ms = Summarize(buf, ps);
    buf.clear();
    for (size_t i = 0; i < done.size(); ++i) {
      const RequestOutcome o = done[i];
      if (o.request_class == cls) buf.push_back(ToMillis(o.finish - o.send));
    }
    c.e2el_ms = Summarize(buf, ps);
    buf.clear();
    for (size_t i = 0; i < done.size(); ++i) {
      const RequestOutcome o = done[i];
      if (o.request_class == cls) buf.push_back(ToMillis(o.first_scheduled - o.send));
    }
    c.queue_ms = Summarize(buf, ps);
    if (c.completed > 0) c.slo_attainment = static_cast<double>(c.good) / c.completed;
    if (duration_s > 0) {
      c.goodput_rps = c.good / duration_s;
      c.request_throughput = c.completed / duration_s;
    }
  }
  return cs;
}

}  // namespace servesim
