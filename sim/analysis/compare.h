// `servesim compare`: is variant B better than variant A? Paired
// replications with common random numbers: replication k of both variants
// runs with seed = its scenario's seed + k, so with equal seeds both see
// the same arrivals and lengths and the per-replication difference B - A
// is the effect of the change alone. Replications run in looks (3, 6, 12,
// ... up to the budget); after each look the primary metric's difference
// is checked, and the comparison stops when its interval excludes 0
// (resolved), when its half-width is within the relative precision (no
// difference that large; from 10 replications on), or when the budget is
// spent.
//
// Stability first (stability.h): each variant's offered rate against its
// OWN saturation throughput mu (rho >= 1 against mu's lower 95% bound) and
// each replication's backlog. An overloaded variant has no steady state,
// its latencies grow with the run length, so a difference of them means
// nothing: every verdict is then "A overloaded", "B overloaded" or "both
// overloaded", and the comparison stops at that look.
//
// Verdicts agree with both printed intervals: "better" or "worse" when the
// interval of B - A excludes 0 or the interval of B/A excludes 1 (either,
// in the same direction); "no detectable difference" only when both
// contain their null value; "mixed" when they exclude it in opposite
// directions (a skewed metric whose mean difference and geometric-mean
// ratio disagree).
//
// Checking after every look would let noise "resolve" more often than 5%;
// the looks share the 5% error (Bonferroni: each look's intervals are at
// 1 - 0.05 / looks), so the reported intervals cover with at least 95%
// whichever look stops the comparison.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/analysis/compare_stats.h"
#include "sim/analysis/confidence.h"
#include "sim/analysis/parallel.h"
#include "sim/analysis/slo.h"
#include "sim/core/status.h"
#include "sim/scenario/scenario.h"

namespace servesim {

// A compared figure: a latency percentile (ttft|tpot|e2el _pP, in ms),
// request throughput (req/s), output token throughput (tok/s) or goodput
// (req/s meeting every SLO term; needs an SLO).
struct CompareMetric {
  std::string name;  // "ttft_p99", "throughput", ...
  std::string unit;  // "ms", "req/s", "tok/s"
  bool higher_is_better = false;
  SloMetric latency = SloMetric::kTtft;  // for percentiles
  double percentile = 0;                 // 0: not a percentile
  // "interactive:ttft_p99": the figure of one request class
  // (workload.classes); its goodput counts the class's own SLOs.
  std::string class_name;
};

// "ttft_p99", "tpot_p50", "e2el_p99.9", "throughput", "output_throughput",
// "goodput"; an error names `option` and lists the forms.
StatusOr<CompareMetric> ParseCompareMetric(const std::string& text,
                                           const std::string& option);

struct CompareOptions {
  std::string primary = "ttft_p99";
  double precision = 0.05;  // stop when the half-width <= this x |A's mean|
  int min_replications = 3;
  int max_replications = 30;
  // The precision rule needs this many replications: with heavy-tailed
  // differences (a rare congestion episode moves a p99 by seconds) a few
  // quiet pairs understate the spread. The resolved rule may fire from the
  // first look.
  int min_replications_for_precision = 10;
  double confidence = 0.95;  // family-wise over the looks
  std::vector<SloTerm> slo;  // goodput when non-empty
  bool estimate_saturation = true;
  // > 0: both variants at rate = utilization x A's saturation throughput
  // (their own rates are replaced), so "90% load" survives a change to the
  // cost model; 0: the scenarios' own (equal) rates.
  double utilization = 0;
  int jobs = 0;
  bool progress = false;  // on stderr, after ~2 s (sim/core/progress.h)
};

enum class CompareVerdict {
  kBetter,
  kWorse,
  kNoDifference,
  kMixed,  // B - A and B/A exclude their null values in opposite directions
  kAOverloaded,
  kBOverloaded,
  kBothOverloaded
};
enum class StopRule { kResolved, kPrecision, kBudget, kOverloaded };

const char* VerdictText(CompareVerdict v);
const char* StopRuleName(StopRule r);
// The verdict the intervals support (the rule above, overload aside).
CompareVerdict IntervalVerdict(const CompareMetric& m, const PairedInterval& i);

struct MetricComparison {
  CompareMetric metric;
  PairedInterval interval;  // at the per-look confidence
  CompareVerdict verdict = CompareVerdict::kNoDifference;
  std::vector<double> a, b;  // per replication
};

struct VariantInfo {
  std::string label;  // file and overrides
  uint64_t seed = 0;
  double offered_rate = 0;
  std::string arrival;
  std::optional<double> mu_rps;  // saturation throughput, when estimated
  Interval mu;                   // its 95% interval (n = 0: not estimated)
  int unstable = 0;              // replications failing the backlog rule
  std::string unstable_reason;   // the first such replication's
  // Why the variant is overloaded (stability.h: the load rule, else the
  // backlog rule); empty when it is not.
  std::string overload_reason;
  bool overloaded() const { return !overload_reason.empty(); }
};

struct Comparison {
  VariantInfo a, b;
  bool common_random_numbers = false;  // equal seeds
  std::vector<int> looks;              // planned replication counts
  int looks_taken = 0;
  int replications = 0;
  double confidence = 0.95;    // family-wise, over the looks
  double look_confidence = 0;  // confidence of each look's intervals
  double precision = 0;
  double utilization = 0;  // the rate's share of A's mu; 0: rates as given
  // kNoDifference: neither variant overloaded; else which one(s).
  CompareVerdict overload = CompareVerdict::kNoDifference;
  StopRule stop = StopRule::kBudget;
  std::string stop_reason;                // one sentence
  std::vector<MetricComparison> metrics;  // primary first
};

// Planned replication counts: min, 2 min, 4 min, ... capped at and ending
// with max.
std::vector<int> CompareLooks(int min_replications, int max_replications);

// Errors: either variant is not open loop, their offered rates differ
// (without a utilization), an SLO-less goodput primary, a bad replication
// budget.
StatusOr<Comparison> ComparePaired(const Scenario& a,
                                   const std::string& a_label,
                                   const Scenario& b,
                                   const std::string& b_label,
                                   const CompareOptions& options);

}  // namespace servesim
