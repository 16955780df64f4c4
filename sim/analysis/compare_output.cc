// Console table and JSON of a paired comparison (see compare_output.h).
#include "sim/analysis/compare_output.h"
#include "sim/report/json_numbers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace servesim {
namespace {

std::string Fixed(double x, int digits) {
  if (!std::isfinite(x)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

// Digits that suit the magnitude: ms latencies and throughputs alike.
int DigitsFor(double x) {
  const double ax = std::abs(x);
  return ax >= 100 ? 1 : ax >= 1 ? 2 : 3;
}

std::string Value(double x, double scale) { return Fixed(x, DigitsFor(scale)); }

std::string Pad(std::string s, size_t width) {
  // Width in code points, so "−" and "ρ" do not shift columns.
  size_t cps = 0;
  for (unsigned char ch : s) cps += (ch & 0xC0) != 0x80;
  s.append(cps < width ? width - cps : 1, ' ');  // never run into the next
  return s;
}

std::string Load(const VariantInfo& v) {
  if (!v.mu_rps) return "μ not estimated";
  std::string mu = "μ " + Fixed(*v.mu_rps, 2);
  if (v.mu.n > 1)
    mu += " [" + Fixed(v.mu.lo, 2) + ", " + Fixed(v.mu.hi, 2) + "]";
  return mu + " req/s, ρ " + Fixed(v.offered_rate / *v.mu_rps, 3);
}

// Which variants are overloaded and why, before any metric's verdict.
void WriteStability(const Comparison& c, std::ostream& out) {
  if (c.overload == CompareVerdict::kNoDifference) {
    out << "Stability: both variants stable ("
        << (c.a.mu_rps && c.b.mu_rps
                ? "offered rate below each one's μ lower 95% bound, "
                : "μ not estimated, ")
        << "no replication's backlog grew)\n";
    return;
  }
  out << "Verdict: " << VerdictText(c.overload)
      << " -- no steady state, its latencies grow with the run length, so no "
         "metric verdict is given\n";
  for (const VariantInfo* v : {&c.a, &c.b}) {
    if (v->overloaded()) {
      out << "  " << (v == &c.a ? "A" : "B") << ": " << v->overload_reason
          << "\n";
    }
  }
}

nlohmann::json VariantJson(const VariantInfo& v, int replications) {
  nlohmann::json j = {
      {"scenario", v.label},
      {"seed", v.seed},
      {"offered_rate", v.offered_rate},
      {"arrival", v.arrival},
      {"saturation_rps", v.mu_rps ? FiniteOrNull(*v.mu_rps) : nlohmann::json(nullptr)},
      {"utilization",
       v.mu_rps ? FiniteOrNull(v.offered_rate / *v.mu_rps) : nlohmann::json(nullptr)},
      {"unstable_replications", v.unstable},
      {"replications", replications},
      {"overloaded", v.overloaded()}};
  if (v.mu.n > 1) j["saturation_interval"] = {FiniteOrNull(v.mu.lo), FiniteOrNull(v.mu.hi)};
  if (v.overloaded()) j["overload_reason"] = v.overload_reason;
  if (v.unstable > 0) j["unstable_reason"] = v.unstable_reason;
  return j;
}

}  // namespace

void WriteCompareTable(const Comparison& c, std::ostream& out) {
  out << "A: " << c.a.label << "\nB: " << c.b.label << "\n";
  out << "Offered " << Fixed(c.a.offered_rate, 2) << " req/s to both";
  if (c.utilization > 0) {
    out << " (" << Fixed(c.utilization, 3) << " x A's μ)";
  }
  out << " (" << c.a.arrival << "); A " << Load(c.a) << "; B " << Load(c.b)
      << "\n";
  out << c.replications << " paired replications, seeds " << c.a.seed << ".."
      << c.a.seed + c.replications - 1;
  if (c.common_random_numbers) {
    out << " for both (common random numbers)\n";
  } else {
    out << " (A) and " << c.b.seed << ".." << c.b.seed + c.replications - 1
        << " (B): different seeds, so the pairs share no random numbers\n";
  }
  WriteStability(c, out);
  out << "Unstable replications (backlog grew or limits.max_queued hit): A "
      << c.a.unstable << ", B " << c.b.unstable << " of " << c.replications
      << "\n";
  out << "Stop rule: " << StopRuleName(c.stop) << " -- " << c.stop_reason
      << "\n";
  out << "Intervals: Student t on the paired differences, "
      << Fixed(100 * c.look_confidence, 2) << "% at each of " << c.looks.size()
      << " planned look" << (c.looks.size() > 1 ? "s" : "")
      << " and for each of B − A and B/A (Bonferroni), so at least "
      << Fixed(100 * c.confidence, 0)
      << "% whichever look stops and whichever interval decides\n\n";
  // Wide enough for per-class names ("interactive:goodput (req/s)").
  size_t width = 27;
  for (const MetricComparison& m : c.metrics) {
    width = std::max(width, m.metric.name.size() + m.metric.unit.size() + 5);
  }
  out << Pad("metric", width) << Pad("A", 11) << Pad("B", 11)
      << Pad("B − A mean [interval]", 34) << Pad("B/A geo. mean [interval]", 27)
      << "verdict\n";
  bool first = true;
  for (const MetricComparison& m : c.metrics) {
    const PairedInterval& i = m.interval;
    const double scale = std::max(std::abs(i.a_mean), std::abs(i.b_mean));
    const std::string name =
        (first ? "*" : " ") + m.metric.name + " (" + m.metric.unit + ")";
    first = false;
    out << Pad(name, width) << Pad(Value(i.a_mean, scale), 11)
        << Pad(Value(i.b_mean, scale), 11)
        << Pad(Value(i.diff, scale) + " [" + Value(i.diff_lo, scale) + ", " +
                   Value(i.diff_hi, scale) + "]",
               34)
        << Pad(Fixed(i.ratio, 3) + " [" + Fixed(i.ratio_lo, 3) + ", " +
                   Fixed(i.ratio_hi, 3) + "]",
               27)
        << VerdictText(m.verdict) << "\n";
  }
  out << "\n* primary metric; better = lower latency or higher throughput; a "
         "verdict of better or worse needs either interval to exclude its null "
         "value (0 for B − A, 1 for B/A), no detectable difference needs both "
         "to hold it\n";
}

nlohmann::json CompareJson(const Comparison& c) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricComparison& m : c.metrics) {
    const PairedInterval& i = m.interval;
    nlohmann::json a = nlohmann::json::array(), b = nlohmann::json::array();
    for (double x : m.a) a.push_back(FiniteOrNull(x));
    for (double x : m.b) b.push_back(FiniteOrNull(x));
    metrics.push_back(
        {{"name", m.metric.name},
         {"unit", m.metric.unit},
         {"better", m.metric.higher_is_better ? "higher" : "lower"},
         {"pairs", i.n},
         {"a_mean", FiniteOrNull(i.a_mean)},
         {"b_mean", FiniteOrNull(i.b_mean)},
         {"difference",
          {{"mean", FiniteOrNull(i.diff)},
           {"lo", FiniteOrNull(i.diff_lo)},
           {"hi", FiniteOrNull(i.diff_hi)}}},
         {"ratio",
          {{"mean", FiniteOrNull(i.ratio)},
           {"lo", FiniteOrNull(i.ratio_lo)},
           {"hi", FiniteOrNull(i.ratio_hi)}}},
         {"verdict", VerdictText(m.verdict)},
         {"a", a},
         {"b", b}});
  }
  return {
      {"command", "compare"},
      {"a", VariantJson(c.a, c.replications)},
      {"b", VariantJson(c.b, c.replications)},
      {"common_random_numbers", c.common_random_numbers},
      {"primary", c.metrics.front().metric.name},
      {"overload", c.overload == CompareVerdict::kNoDifference
                       ? nlohmann::json(nullptr)
                       : nlohmann::json(VerdictText(c.overload))},
      {"precision", c.precision},
      {"utilization_of_a_mu", c.utilization > 0 ? nlohmann::json(c.utilization)
                                                : nlohmann::json(nullptr)},
      {"looks", c.looks},
      {"looks_taken", c.looks_taken},
      {"replications", c.replications},
      {"confidence", c.confidence},
      {"look_confidence", c.look_confidence},
      {"stop_rule", StopRuleName(c.stop)},
      {"stop_reason", c.stop_reason},
      {"metrics", metrics}};
}

}  // namespace servesim
