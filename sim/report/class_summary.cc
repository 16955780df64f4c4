// Per-class summary (see class_summary.h).
#include "sim/report/class_summary.h"

namespace servesim {

std::vector<ClassSummary> SummarizeClasses(const SimulationOutput& out,
                                           const SimulationInput& in,
                                           double duration_s) {
  const RequestClasses& classes = in.workload.classes;
  std::vector<ClassSummary> cs(classes.size());
  double total_share = 0;
  for (const RequestClass& c : classes) total_share += c.share;
  struct Samples {
    std::vector<double> ttft, tpot, e2el, queue;
  };
  std::vector<Samples> samples(classes.size());
  for (size_t k = 0; k < classes.size(); ++k) {
    cs[k].name = classes[k].name;
    cs[k].share = classes[k].share / total_share;
    cs[k].priority = classes[k].priority;
    cs[k].ttft_slo_ms = classes[k].ttft_slo_s * 1e3;
    cs[k].tpot_slo_ms = classes[k].tpot_slo_s * 1e3;
  }
  for (const Request& r : out.requests) {
    if (r.request_class < 0 || r.request_class >= static_cast<int32_t>(cs.size())) {
      continue;  // run invariants flag it
    }
    ClassSummary& c = cs[r.request_class];
    Samples& x = samples[r.request_class];
    ++c.created;
    if (r.status == RequestStatus::kRejected) {
      ++c.rejected;
      c.failed += r.measured;
      continue;
    }
    if (r.status != RequestStatus::kFinished) {
      ++c.unfinished;
      continue;
    }
    if (!r.measured) {
      ++c.excluded_warmup;
      continue;
    }
    ++c.completed;
    c.input_tokens += r.prompt_len;
    c.output_tokens += r.output_len;
    c.preemptions += r.preemptions;
    const double ttft = ToMillis(r.first_token - r.send);
    double tpot = 0;  // vLLM: 0 for a one-token answer
    x.ttft.push_back(ttft);
    x.e2el.push_back(ToMillis(r.finish - r.send));
    x.queue.push_back(ToMillis(r.first_scheduled - r.send));
    if (r.output_len > 1) {
      tpot = ToMillis(r.finish - r.first_token) / (r.output_len - 1);
      x.tpot.push_back(tpot);
    }
    const bool ttft_ok = c.ttft_slo_ms <= 0 || ttft <= c.ttft_slo_ms;
    const bool tpot_ok = c.tpot_slo_ms <= 0 || tpot <= c.tpot_slo_ms;
    c.good += ttft_ok && tpot_ok;
  }
  const std::vector<double>& ps = in.metrics.percentiles;
  for (size_t k = 0; k < cs.size(); ++k) {
    ClassSummary& c = cs[k];
    c.ttft_ms = Summarize(samples[k].ttft, ps);
    c.tpot_ms = Summarize(samples[k].tpot, ps);
    c.e2el_ms = Summarize(samples[k].e2el, ps);
    c.queue_ms = Summarize(samples[k].queue, ps);
    if (c.completed > 0) c.slo_attainment = static_cast<double>(c.good) / c.completed;
    if (duration_s > 0) {
      c.goodput_rps = c.good / duration_s;
      c.request_throughput = c.completed / duration_s;
    }
  }
  return cs;
}

}  // namespace servesim
