// Request classes (workload.classes): a share of the traffic with its own
// length distributions, a scheduling priority and latency SLOs. Each
// request is drawn into one class from its own random stream ("class"), so
// adding classes never moves the arrivals, and a policy change never moves
// which request is in which class.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/workload/length_distribution.h"

namespace servesim {

struct RequestClass {
  std::string name;
  double share = 1;  // relative weight; shares are normalised over classes
  std::shared_ptr<const LengthDistribution> input_len, output_len;
  // vLLM's request priority: lower values are served first by the
  // `priority` policy (vllm/v1/request.py Request.__lt__).
  int32_t priority = 0;
  // SLOs in seconds, 0 = none. A completed request is "good" when its TTFT
  // and TPOT are within them (vllm bench serve --goodput); the `edf` policy
  // orders by arrival + ttft_slo_s.
  double ttft_slo_s = 0, tpot_slo_s = 0;
};

using RequestClasses = std::vector<RequestClass>;

// Index of the class a uniform draw u in [0, 1) falls in, by cumulative
// normalised share.
inline int32_t ClassOfDraw(const RequestClasses& classes, double u) {
  double total = 0;
  for (const RequestClass& c : classes) total += c.share;
  double acc = 0;
  for (size_t k = 0; k + 1 < classes.size(); ++k) {
    acc += classes[k].share / total;
    if (u < acc) return static_cast<int32_t>(k);
  }
  return static_cast<int32_t>(classes.size()) - 1;
}

}  // namespace servesim
