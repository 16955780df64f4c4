// Paired comparison of two scenario variants (see compare.h).
#include "sim/analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "sim/analysis/compare_load.h"
#include "sim/analysis/runs.h"
#include "sim/analysis/stability.h"

namespace servesim {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

const char kMetricForms[] =
    "ttft|tpot|e2el _pP (P in (0, 100], e.g. ttft_p99), throughput, "
    "output_throughput or goodput, each also of one request class as "
    "CLASS:metric (e.g. interactive:ttft_p99; CLASS:goodput counts the "
    "class's own SLOs)";

double Percentile(const SampleStats& s, double p) {
  if (s.count == 0) return kNoValue;
  for (const auto& [q, v] : s.percentiles) {
    if (std::abs(q - p) < 1e-9) return v;
  }
  return kNoValue;
}

// The metric's value in one replication; `good_share` is GoodShare's.
double ClassMetricValue(const CompareMetric& m, const RunSummary& s) {
  for (const ClassSummary& c : s.classes) {
    if (c.name != m.class_name) continue;
    if (m.percentile > 0) {
      switch (m.latency) {
        case SloMetric::kTtft:
          return Percentile(c.ttft_ms, m.percentile);
        case SloMetric::kTpot:
          return Percentile(c.tpot_ms, m.percentile);
        case SloMetric::kE2el:
          return Percentile(c.e2el_ms, m.percentile);
      }
    }
    const std::string base = m.name.substr(m.class_name.size() + 1);
    if (base == "throughput") return c.request_throughput;
    if (base == "output_throughput") {
      return s.duration_s > 0 ? c.output_tokens / s.duration_s : kNoValue;
    }
    return c.goodput_rps;
  }
  return kNoValue;  // no such class in this variant
}

double MetricValue(const CompareMetric& m, const RunSummary& s,
                   double good_share) {
  if (!m.class_name.empty()) return ClassMetricValue(m, s);
  if (m.percentile > 0) {
    switch (m.latency) {
      case SloMetric::kTtft:
        return Percentile(s.ttft_ms, m.percentile);
      case SloMetric::kTpot:
        return Percentile(s.tpot_ms, m.percentile);
      case SloMetric::kE2el:
        return Percentile(s.e2el_ms, m.percentile);
    }
  }
  if (m.name == "throughput") return s.request_throughput;
  if (m.name == "output_throughput") return s.output_throughput;
  return good_share * s.request_throughput;  // goodput
}

std::string Number(double x) {
  std::ostringstream o;
  o.precision(4);
  o << x;
  return o.str();
}

Status CheckVariant(const Scenario& sc, const std::string& label) {
  if (sc.workload.closed_loop || sc.OfferedRate() <= 0) {
    return Status::Error(
        label +
        ": /workload/arrival: compare runs both variants at one "
        "offered rate; expected open-loop arrivals (poisson, gamma or "
        "constant) with a rate, got " +
        sc.ArrivalDescription());
  }
  return Status::Ok();
}

VariantInfo Variant(const Scenario& sc, const std::string& label) {
  VariantInfo v;
  v.label = label;
  v.seed = sc.seed;
  v.offered_rate = sc.OfferedRate();
  v.arrival = sc.ArrivalDescription();
  return v;
}

// The reported metrics: the primary first, then the standard set.
std::vector<CompareMetric> MetricList(const CompareMetric& primary,
                                      bool with_goodput,
                                      const RequestClasses& classes) {
  std::vector<std::string> names = {
      "ttft_p50", "ttft_p90",   "ttft_p99",         "tpot_p50",
      "tpot_p90", "tpot_p99",   "e2el_p50",         "e2el_p90",
      "e2el_p99", "throughput", "output_throughput"};
  if (with_goodput) names.push_back("goodput");
  // Each class's tail latencies and goodput (by its own SLOs).
  for (const RequestClass& k : classes) {
    for (const char* n : {"ttft_p50", "ttft_p99", "tpot_p99", "e2el_p99", "goodput"}) {
      names.push_back(k.name + ":" + n);
    }
  }
  std::vector<CompareMetric> list = {primary};
  for (const std::string& n : names) {
    CompareMetric m = *ParseCompareMetric(n, "");
    // "ttft_p99.0" is ttft_p99: the same figure once.
    const bool same = m.name == primary.name ||
                      (m.percentile > 0 && m.latency == primary.latency &&
                       m.percentile == primary.percentile &&
                       m.class_name == primary.class_name);
    if (!same) list.push_back(std::move(m));
  }
  return list;
}

}  // namespace

StatusOr<CompareMetric> ParseCompareMetric(const std::string& text,
                                           const std::string& option) {
  if (const size_t colon = text.find(':'); colon != std::string::npos) {
    if (colon == 0 || text.find(':', colon + 1) != std::string::npos) {
      return Status::Error(option + " " + text + ": expected " + kMetricForms);
    }
    StatusOr<CompareMetric> base = ParseCompareMetric(text.substr(colon + 1), option);
    if (!base.ok()) {
      return Status::Error(option + " " + text + ": expected " + kMetricForms);
    }
    base->class_name = text.substr(0, colon);
    base->name = text;
    return base;
  }
  CompareMetric m;
  m.name = text;
  if (text == "throughput" || text == "goodput") {
    m.unit = "req/s";
    m.higher_is_better = true;
    return m;
  }
  if (text == "output_throughput") {
    m.unit = "tok/s";
    m.higher_is_better = true;
    return m;
  }
  m.unit = "ms";
  const size_t us = text.find("_p");
  const std::string kind = text.substr(0, us);
  if (kind == "ttft")
    m.latency = SloMetric::kTtft;
  else if (kind == "tpot")
    m.latency = SloMetric::kTpot;
  else if (kind == "e2el")
    m.latency = SloMetric::kE2el;
  if (us != std::string::npos &&
      (kind == "ttft" || kind == "tpot" || kind == "e2el")) {
    const std::string pct = text.substr(us + 2);
    size_t used = 0;
    try {
      m.percentile = std::stod(pct, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != 0 && used == pct.size() && m.percentile > 0 &&
        m.percentile <= 100) {
      return m;
    }
  }
  return Status::Error(option + " " + text + ": expected " + kMetricForms);
}

CompareVerdict IntervalVerdict(const CompareMetric& m,
                               const PairedInterval& i) {
  // +1: B above A, -1: below, 0: the interval holds the null value (or is
  // NaN: no pairs, one pair, a ratio without logs).
  const int by_diff = i.diff_lo > 0 ? 1 : i.diff_hi < 0 ? -1 : 0;
  const int by_ratio = i.ratio_lo > 1 ? 1 : i.ratio_hi < 1 ? -1 : 0;
  if (by_diff * by_ratio < 0) return CompareVerdict::kMixed;
  const int direction = by_diff != 0 ? by_diff : by_ratio;
  if (direction == 0) return CompareVerdict::kNoDifference;
  return (direction > 0) == m.higher_is_better ? CompareVerdict::kBetter
                                               : CompareVerdict::kWorse;
}

const char* VerdictText(CompareVerdict v) {
  switch (v) {
    case CompareVerdict::kBetter:
      return "better";
    case CompareVerdict::kWorse:
      return "worse";
    case CompareVerdict::kMixed:
      return "mixed: B - A and B/A point opposite ways";
    case CompareVerdict::kAOverloaded:
      return "A overloaded";
    case CompareVerdict::kBOverloaded:
      return "B overloaded";
    case CompareVerdict::kBothOverloaded:
      return "both overloaded";
    case CompareVerdict::kNoDifference:
      break;
  }
  return "no detectable difference at this precision";
}

const char* StopRuleName(StopRule r) {
  switch (r) {
    case StopRule::kResolved:
      return "resolved";
    case StopRule::kPrecision:
      return "precision";
    case StopRule::kOverloaded:
      return "overloaded";
    case StopRule::kBudget:
      break;
  }
  return "budget";
}

std::vector<int> CompareLooks(int min_replications, int max_replications) {
  std::vector<int> looks;
  for (int n = min_replications; n < max_replications; n *= 2)
    looks.push_back(n);
  looks.push_back(max_replications);
  return looks;
}

namespace {

Status CheckInputs(const Scenario& a, const std::string& a_label,
                   const Scenario& b, const std::string& b_label,
                   const CompareOptions& options) {
  if (Status st = CheckVariant(a, a_label); !st.ok()) return st;
  if (Status st = CheckVariant(b, b_label); !st.ok()) return st;
  if (options.utilization > 0 && !options.estimate_saturation) {
    return Status::Error(
        "--utilization: expected the saturation runs that define it; drop "
        "--no-saturation");
  }
  if (options.utilization <= 0 &&
      std::abs(a.OfferedRate() - b.OfferedRate()) >
          1e-9 * std::max(a.OfferedRate(), b.OfferedRate())) {
    return Status::Error(
        "A (" + a_label + ") offers " + Number(a.OfferedRate()) +
        " req/s and B (" + b_label + ") " + Number(b.OfferedRate()) +
        " req/s: compare runs both variants at one offered rate; expected the "
        "same workload.arrival.rate");
  }
  if (options.min_replications < 2 ||
      options.max_replications < options.min_replications) {
    return Status::Error(
        "--min-replications " + std::to_string(options.min_replications) +
        ", --max-replications " + std::to_string(options.max_replications) +
        ": expected 2 <= min <= max");
  }
  return Status::Ok();
}

// Replications [from, to) of both variants, appended to every metric; an
// error if a run's warm-up left nothing measured.
Status RunReplications(const RunSpec& a, const RunSpec& b, int from, int to,
                       int jobs, ProgressBar* bar, Comparison* c) {
  std::vector<RunSpec> specs;  // 2k: A, 2k + 1: B, replication k of both
  for (int k = from; k < to; ++k) {
    for (const RunSpec* base : {&a, &b}) {
      specs.push_back(*base);
      specs.back().replication = k;
    }
  }
  if (bar) bar->AddTotal(static_cast<int>(specs.size()));
  const std::vector<RunResult> results = RunAll(specs, jobs, bar);
  for (size_t i = 0; i < results.size(); ++i) {
    const bool is_a = i % 2 == 0;
    const RunResult& r = results[i];
    if (Status st = CheckSomethingMeasured(*specs[i].scenario, r.summary); !st.ok()) return st;
    VariantInfo& v = is_a ? c->a : c->b;
    const std::string why = RunInstability(r.summary);
    if (!why.empty() && v.unstable++ == 0) v.unstable_reason = why;
    for (MetricComparison& m : c->metrics) {
      (is_a ? m.a : m.b)
          .push_back(MetricValue(m.metric, r.summary, r.inspected));
    }
  }
  c->replications = to;
  return Status::Ok();
}

// Intervals and verdicts at the current look; true when a stop rule fires
// (c->stop and c->stop_reason say which).
bool EvaluateLook(const CompareOptions& options, Comparison* c) {
  ++c->looks_taken;
  const bool overloaded = JudgeOverload(c);
  for (MetricComparison& m : c->metrics) {
    m.interval = PairedDifference(m.a, m.b, c->look_confidence);
    m.verdict =
        overloaded ? c->overload : IntervalVerdict(m.metric, m.interval);
  }
  const MetricComparison& primary = c->metrics.front();
  const PairedInterval& p = primary.interval;
  const std::string& name = primary.metric.name;
  const std::string& unit = primary.metric.unit;
  const int n = c->replications;
  const double half = (p.diff_hi - p.diff_lo) / 2;
  const std::string after = " after " + std::to_string(n) + " replications";
  if (overloaded) {
    // More replications would only measure a longer queue.
    c->stop = StopRule::kOverloaded;
    c->stop_reason =
        std::string(VerdictText(c->overload)) +
        ": no steady state, so no latency difference is meaningful" + after;
    return true;
  }
  if (primary.verdict == CompareVerdict::kBetter ||
      primary.verdict == CompareVerdict::kWorse) {
    const bool by_diff = p.diff_lo > 0 || p.diff_hi < 0;
    c->stop = StopRule::kResolved;
    c->stop_reason = name +
                     (by_diff ? ": the interval of B - A excludes 0"
                              : ": the interval of B/A excludes 1") +
                     after;
    return true;
  }
  if (n >= options.min_replications_for_precision &&
      half <= options.precision * std::abs(p.a_mean)) {
    c->stop = StopRule::kPrecision;
    c->stop_reason = name + ": the interval's half-width " + Number(half) +
                     " " + unit + " is within " +
                     Number(100 * options.precision) + "% of A's " +
                     Number(p.a_mean) + after;
    return true;
  }
  if (n == c->looks.back()) {
    c->stop = StopRule::kBudget;
    c->stop_reason = name + ": unresolved after the budget of " +
                     std::to_string(n) + " replications (half-width " +
                     Number(half) + " " + unit + ", " +
                     Number(100 * half / std::abs(p.a_mean)) + "% of A's)";
    return true;
  }
  return false;
}

}  // namespace

StatusOr<Comparison> ComparePaired(const Scenario& a,
                                   const std::string& a_label,
                                   const Scenario& b,
                                   const std::string& b_label,
                                   const CompareOptions& options) {
  if (Status st = CheckInputs(a, a_label, b, b_label, options); !st.ok()) {
    return st;
  }
  StatusOr<CompareMetric> primary =
      ParseCompareMetric(options.primary, "--primary");
  if (!primary.ok()) return primary.status();
  if (primary->name == "goodput" && options.slo.empty()) {
    return Status::Error(
        "--primary goodput: expected --slo terms to define it");
  }

  Comparison c;
  c.a = Variant(a, a_label);
  c.b = Variant(b, b_label);
  c.common_random_numbers = a.seed == b.seed;
  c.looks = CompareLooks(options.min_replications, options.max_replications);
  c.confidence = options.confidence;
  // The error is shared by the looks and, at each, by the two intervals a
  // verdict may rest on (B - A and B/A).
  c.look_confidence = 1 - (1 - options.confidence) /
                              (2.0 * static_cast<double>(c.looks.size()));
  c.precision = options.precision;
  if (!primary->class_name.empty()) {
    bool found = false;
    for (const RequestClass& k : a.workload.classes) found |= k.name == primary->class_name;
    if (!found) {
      return Status::Error("--primary " + options.primary + ": expected a class of " +
                           a_label + "'s /workload/classes");
    }
  }
  for (const CompareMetric& m :
       MetricList(*primary, !options.slo.empty(), a.workload.classes)) {
    c.metrics.push_back({m, {}, CompareVerdict::kNoDifference, {}, {}});
  }
  if (options.estimate_saturation) EstimateLoads(a, b, options.jobs, &c);
  Scenario at_rate_a = a, at_rate_b = b;
  if (options.utilization > 0) {
    if (Status st = SetRateFromUtilization(options.utilization, a_label,
                                           &at_rate_a, &at_rate_b, &c);
        !st.ok()) {
      return st;
    }
  }

  RunSpec spec_a, spec_b;
  spec_a.scenario = std::make_shared<const Scenario>(std::move(at_rate_a));
  spec_b.scenario = std::make_shared<const Scenario>(std::move(at_rate_b));
  spec_a.extra_percentiles = {50, 90, 99};
  if (primary->percentile > 0) {
    spec_a.extra_percentiles.push_back(primary->percentile);
  }
  spec_b.extra_percentiles = spec_a.extra_percentiles;
  if (!options.slo.empty()) {
    spec_a.inspect = [slo = options.slo](const SimulationOutput& out) {
      return GoodShare(out.requests, slo);
    };
    spec_b.inspect = spec_a.inspect;
  }
  std::unique_ptr<ProgressBar> bar;
  if (options.progress) bar = std::make_unique<ProgressBar>("compare", 0, 2);
  for (const int n : c.looks) {
    if (Status st = RunReplications(spec_a, spec_b, c.replications, n, options.jobs,
                                    bar.get(), &c);
        !st.ok()) {
      return st;
    }
    if (EvaluateLook(options, &c)) break;
  }
  if (bar) bar->Finish();
  return c;
}

}  // namespace servesim
