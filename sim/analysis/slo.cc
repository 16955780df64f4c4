// SLO parsing and checks (see slo.h).
#include "sim/analysis/slo.h"

#include <cmath>
#include <sstream>

#include "sim/analysis/runs.h"

namespace servesim {
namespace {

Status Bad(const std::string& term, const std::string& expected) {
  return Status::Error("--slo " + term + ": expected " + expected);
}

bool ParsePositive(const std::string& s, double* x) {
  size_t used = 0;
  try {
    *x = std::stod(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size() && std::isfinite(*x) && *x > 0;
}

StatusOr<SloTerm> ParseTerm(const std::string& term) {
  const size_t eq = term.find('=');
  const size_t us = term.find("_p");
  if (eq == std::string::npos || us == std::string::npos || us > eq) {
    return Bad(term, "METRIC_pP=VALUE, e.g. ttft_p99=2s");
  }
  SloTerm t;
  t.name = term.substr(0, eq);
  const std::string metric = term.substr(0, us);
  if (metric == "ttft") t.metric = SloMetric::kTtft;
  else if (metric == "tpot") t.metric = SloMetric::kTpot;
  else if (metric == "e2el") t.metric = SloMetric::kE2el;
  else return Bad(term, "a metric of ttft, tpot or e2el, got \"" + metric + "\"");
  const std::string pct = term.substr(us + 2, eq - us - 2);
  if (!ParsePositive(pct, &t.percentile) || t.percentile > 100) {
    return Bad(term, "a percentile in (0, 100] after _p, got \"" + pct + "\"");
  }
  std::string value = term.substr(eq + 1);
  double scale = 0;
  if (value.size() > 2 && value.compare(value.size() - 2, 2, "ms") == 0) {
    scale = 1;
    value.resize(value.size() - 2);
  } else if (value.size() > 1 && value.back() == 's') {
    scale = 1e3;
    value.pop_back();
  }
  if (scale == 0 || !ParsePositive(value, &t.limit_ms)) {
    return Bad(term, "a duration > 0 in s or ms, e.g. 2s or 100ms, got \"" +
                         term.substr(eq + 1) + "\"");
  }
  t.limit_ms *= scale;
  return t;
}

}  // namespace

StatusOr<std::vector<SloTerm>> ParseSlo(const std::string& text) {
  std::vector<SloTerm> terms;
  std::istringstream in(text);
  std::string term;
  while (std::getline(in, term, ',')) {
    StatusOr<SloTerm> t = ParseTerm(term);
    if (!t.ok()) return t.status();
    terms.push_back(*t);
  }
  if (terms.empty()) {
    return Status::Error("--slo: expected at least one term, e.g. ttft_p99=2s");
  }
  return terms;
}

double SloValue(const RunSummary& s, const SloTerm& t) {
  switch (t.metric) {
    case SloMetric::kTtft: return PercentileValue(s.ttft_ms, t.percentile);
    case SloMetric::kTpot: return PercentileValue(s.tpot_ms, t.percentile);
    case SloMetric::kE2el: return PercentileValue(s.e2el_ms, t.percentile);
  }
  return 0;
}

namespace {

// As Summarize: from the send, TPOT over the tokens after the first (none
// for a one-token answer).
bool MetricOf(const Request& r, SloMetric m, double* v) {
  const double ttft = ToMillis(r.first_token - r.send);
  const double e2el = ToMillis(r.finish - r.send);
  switch (m) {
    case SloMetric::kTtft: *v = ttft; return true;
    case SloMetric::kE2el: *v = e2el; return true;
    case SloMetric::kTpot:
      if (r.output_len <= 1) return false;
      *v = (e2el - ttft) / (r.output_len - 1);
      return true;
  }
  return false;
}

}  // namespace

std::vector<std::vector<double>> SloSamples(const RequestTable& requests,
                                            const std::vector<SloTerm>& slo) {
  std::vector<std::vector<double>> out(slo.size());
  for (const Request& r : requests) {
    if (!r.measured || r.status != RequestStatus::kFinished) continue;
    for (size_t i = 0; i < slo.size(); ++i) {
      double v = 0;
      if (MetricOf(r, slo[i].metric, &v)) out[i].push_back(v);
    }
  }
  return out;
}

double GoodShare(const RequestTable& requests, const std::vector<SloTerm>& slo) {
  int64_t finished = 0, good = 0;
  for (const Request& r : requests) {
    if (!r.measured || r.status != RequestStatus::kFinished) continue;
    ++finished;
    bool ok = true;
    for (const SloTerm& t : slo) {
      double v = 0;  // a one-token answer has no TPOT: nothing to miss
      ok = ok && (!MetricOf(r, t.metric, &v) || v <= t.limit_ms);
    }
    good += ok ? 1 : 0;
  }
  return finished > 0 ? static_cast<double>(good) / finished : 0;
}

}  // namespace servesim
