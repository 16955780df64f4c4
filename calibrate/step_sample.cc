// Step sampling from a simulator run (see step_sample.h).
#include "calibrate/step_sample.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace servesim::calibrate {

StepCost RecordingCostModel::StepTime(const BatchShape& batch) const {
  steps_.push_back(batch);
  return inner_->StepTime(batch);
}

StepSample SampleSteps(const Scenario& scenario, int count) {
  RecordingCostModel recorder(scenario.cost_model.get());
  SimulationInput in = scenario.ToSimulationInput();
  in.cost_model = &recorder;
  // Steps are replayed on a GPU sequence by sequence: each decode's own
  // context, not the decode group's sum.
  in.engine.decode_group = false;
  RunSimulation(in);
  std::vector<BatchShape> all;
  for (const BatchShape& b : recorder.steps()) {
    const bool any = std::any_of(b.seqs.begin(), b.seqs.end(),
                                 [](const SeqWork& s) { return s.new_tokens > 0; });
    if (any) all.push_back(b);
  }
  if (all.empty()) {
    throw std::invalid_argument(scenario.file + ": the simulation ran no steps");
  }
  StepSample out;
  out.simulated_steps = static_cast<int64_t>(all.size());
  if (count <= 0 || static_cast<size_t>(count) >= all.size()) {
    out.steps = std::move(all);
    return out;
  }
  out.steps.reserve(count);
  // Midpoints of `count` equal slices of the run.
  for (int i = 0; i < count; ++i) {
    const size_t at = static_cast<size_t>((i + 0.5) * all.size() / count);
    out.steps.push_back(all[std::min(at, all.size() - 1)]);
  }
  return out;
}

const char* StepClass(const BatchShape& step) {
  bool decode = false, prefill = false;
  for (const SeqWork& s : step.seqs) {
    if (s.new_tokens == 0) continue;
    (IsDecode(s) ? decode : prefill) = true;
  }
  return decode && prefill ? "mixed" : decode ? "decode" : "prefill";
}

std::string StepLabel(const BatchShape& step) {
  int64_t decodes = 0, ctx_sum = 0, ctx_min = INT64_MAX, ctx_max = 0;
  int64_t prefills = 0, new_sum = 0, cached_sum = 0;
  for (const SeqWork& s : step.seqs) {
    if (s.new_tokens == 0) continue;
    if (IsDecode(s)) {
      ++decodes;
      ctx_sum += s.context_tokens;
      ctx_min = std::min<int64_t>(ctx_min, s.context_tokens);
      ctx_max = std::max<int64_t>(ctx_max, s.context_tokens);
    } else {
      ++prefills;
      new_sum += s.new_tokens;
      cached_sum += s.context_tokens;
    }
  }
  std::string out;
  char buf[96];
  if (decodes > 0) {
    std::snprintf(buf, sizeof buf, "%lld decode (ctx %lld..%lld, mean %lld)",
                  static_cast<long long>(decodes), static_cast<long long>(ctx_min),
                  static_cast<long long>(ctx_max),
                  static_cast<long long>(ctx_sum / decodes));
    out = buf;
  }
  if (prefills > 0) {
    std::snprintf(buf, sizeof buf, "%s%lld prefill (%lld new after %lld)",
                  out.empty() ? "" : " + ", static_cast<long long>(prefills),
                  static_cast<long long>(new_sum),
                  static_cast<long long>(cached_sum));
    out += buf;
  }
  return out;
}

}  // namespace servesim::calibrate
