// Service-level objectives: "ttft_p99=2s,tpot_p99=100ms,e2el_p99=30s".
// Each term bounds one percentile of one per-request latency.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/engine/request.h"
#include "sim/report/summary.h"

namespace servesim {

enum class SloMetric { kTtft, kTpot, kE2el };

struct SloTerm {
  SloMetric metric = SloMetric::kTtft;
  double percentile = 99;  // in (0, 100]
  double limit_ms = 0;     // > 0
  std::string name;        // as given, e.g. "ttft_p99"
};

// Terms separated by commas; each METRIC_pP=VALUE with METRIC in ttft,
// tpot, e2el, P a percentile in (0, 100], VALUE a number > 0 with unit s or
// ms. Errors are one line quoting the offending term.
StatusOr<std::vector<SloTerm>> ParseSlo(const std::string& text);

// The run's value of the term's percentile (ms).
double SloValue(const RunSummary& s, const SloTerm& t);

// vLLM --goodput semantics: a finished, measured request is good when its
// own TTFT, TPOT and E2E latency are each within the limit of every term
// on that metric. Returns the share of good requests (0 when none).
// Per SLO term, the term's metric (ms) for every finished, measured
// request, defined as GoodShare reads it.
std::vector<std::vector<double>> SloSamples(const RequestTable& requests,
                                            const std::vector<SloTerm>& slo);

double GoodShare(const RequestTable& requests, const std::vector<SloTerm>& slo);

}  // namespace servesim
