// Console report and scenario JSON for `servesim fit`.
#include "sim/report/log_fit_writers.h"

#include <cmath>
#include <cstdio>
#include <iomanip>

namespace servesim {
namespace {

// Integers as integers; interpolated percentiles keep two decimals.
std::string Value(double x) {
  char buf[64];
  if (x == std::floor(x) && std::fabs(x) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", x);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", x);
  }
  return buf;
}

std::string Fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string PercentileName(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

void Row(std::ostream& os, const std::string& name, const std::string& a,
         const std::string& b) {
  os << "  " << std::left << std::setw(18) << name << std::right
     << std::setw(12) << a << std::setw(14) << b << "\n";
}

void WriteLengthTable(const LogFit& fit, std::ostream& os) {
  const LengthFit& p = fit.prompt;
  const LengthFit& c = fit.completion;
  Row(os, "tokens", "prompt", "completion");
  Row(os, "count", std::to_string(p.stats.count),
      std::to_string(c.stats.count));
  Row(os, "mean", Fixed(p.stats.mean, 1), Fixed(c.stats.mean, 1));
  for (size_t i = 0; i < p.stats.percentiles.size(); ++i) {
    Row(os, PercentileName(p.stats.percentiles[i].first),
        Value(p.stats.percentiles[i].second),
        Value(c.stats.percentiles[i].second));
  }
  Row(os, "max", Value(p.stats.max), Value(c.stats.max));
  Row(os, "share < 50", Fixed(100 * p.share_under_50, 1) + "%",
      Fixed(100 * c.share_under_50, 1) + "%");
  Row(os, "lognormal mu", Fixed(p.lognormal.mu, 4), Fixed(c.lognormal.mu, 4));
  Row(os, "lognormal sigma", Fixed(p.lognormal.sigma, 4),
      Fixed(c.lognormal.sigma, 4));
  Row(os, "KS distance", Fixed(p.ks_distance, 4), Fixed(c.ks_distance, 4));
}

nlohmann::json LengthJson(const LengthFit& f) {
  const double lo = f.stats.min, hi = f.stats.max;
  if (lo == hi || !(f.lognormal.sigma > 0)) {
    return {{"dist", "fixed"}, {"value", static_cast<int64_t>(lo)}};
  }
  return {{"dist", "lognormal"},
          {"mu", f.lognormal.mu},
          {"sigma", f.lognormal.sigma},
          {"min", static_cast<int64_t>(lo)},
          {"max", static_cast<int64_t>(hi)}};
}

}  // namespace

void WriteFitReport(const LogFit& fit, const std::string& source,
                    std::ostream& os) {
  os << "Trace " << source << ": " << fit.records << " requests ("
     << fit.data_lines << " data lines, " << fit.bad_lines << " malformed)\n";
  for (const std::string& e : fit.first_errors) os << "  malformed: " << e << "\n";
  if (fit.bad_lines > static_cast<int64_t>(fit.first_errors.size())) {
    os << "  (and " << fit.bad_lines - static_cast<int64_t>(fit.first_errors.size())
       << " more malformed lines)\n";
  }
  const std::string notes = DescribeTraceNotes(fit.notes);
  if (!notes.empty()) os << "Notes: " << notes << "\n";
  os << "\n";
  WriteLengthTable(fit, os);
  os << "\n";
  if (fit.arrival) {
    const ArrivalFit& a = *fit.arrival;
    os << "Arrivals: " << Fixed(a.rate, 3) << " req/s over "
       << Fixed(a.span_s, 1) << " s; inter-arrival CV " << Fixed(a.cv, 3)
       << ", gamma burstiness (1/CV^2) " << Fixed(a.burstiness, 3)
       << " (1 = Poisson, < 1 burstier)\n";
  } else {
    os << "Arrivals: no timestamps spanning time; the scenario uses Poisson "
          "at 1 req/s (set the rate you want to study)\n";
  }
  if (fit.reuse) {
    const ReuseFit& r = *fit.reuse;
    os << "Prefix reuse: " << Fixed(100 * r.fraction, 1) << "% of " << r.blocks
       << " hash ids (" << r.block_tokens
       << "-token blocks) were seen earlier (infinite-cache block hit "
          "rate)\n";
  }
}

nlohmann::json FitScenarioJson(const LogFit& fit, const std::string& source) {
  nlohmann::json arrival;
  if (!fit.arrival) {
    arrival = {{"process", "poisson"}, {"rate", 1.0}};
  } else if (std::isinf(fit.arrival->burstiness)) {
    arrival = {{"process", "constant"}, {"rate", fit.arrival->rate}};
  } else {
    arrival = {{"process", "gamma"},
               {"rate", fit.arrival->rate},
               {"burstiness", fit.arrival->burstiness}};
  }
  nlohmann::json j;
  j["name"] = "fit";
  j["description"] = "Fitted by servesim fit from " + source + ".";
  j["seed"] = 1;
  j["model"] = "llama-3.1-8b";
  j["hardware"] = {{"gpu", "h200"}, {"tp", 1}};
  j["workload"] = {{"arrival", arrival},
                   {"input_len", LengthJson(fit.prompt)},
                   {"output_len", LengthJson(fit.completion)},
                   {"num_requests", fit.records}};
  return j;
}

}  // namespace servesim
