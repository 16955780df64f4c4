// The stability rules of open-loop points (see stability.h).
#include "sim/analysis/stability.h"

#include <cmath>
#include <cstdio>

#include "sim/report/arrival_window.h"

namespace servesim {

double BacklogGrowth(const RunSummary& s) {
  const double grown = s.backlog_second_half - s.backlog_first_half;
  const double served =
      s.steady_request_throughput * s.arrival_window_s * (1 - kLeadInShare);
  if (served <= 0) return grown > 0 ? INFINITY : 0;
  return 2 * grown / served;
}

std::string RunInstability(const RunSummary& s) {
  // The engine's hard stop counts; its own growth flag (what `run`
  // reports) is left to the backlog rule below, which scales with the run.
  if (s.cut_short) {
    return s.unstable_reason.empty() ? "the run stopped at its queue bound"
                                     : s.unstable_reason;
  }
  const double first = s.backlog_first_half, second = s.backlog_second_half;
  const double growth = BacklogGrowth(s);
  if (second <= kBacklogFactor * first ||
      second - first <= kBacklogSigmas * std::sqrt(first + second) ||
      growth < kBacklogGrowth) {
    return "";
  }
  char text[240];
  std::snprintf(text, sizeof text,
                "the backlog more than doubled: %.1f requests in system over "
                "the arrival window's first half, %.1f over its second, "
                "growing at %.1f%% of the throughput (rho about %.3f)",
                first, second, 100 * growth, 1 + growth);
  return text;
}

std::string LoadInstability(double rate, const Interval& mu) {
  const double lo = mu.n > 1 ? mu.lo : mu.mean;
  if (mu.mean <= 0 || rate < lo) return "";
  char text[200];
  std::snprintf(text, sizeof text,
                "the offered %.3f req/s is at or above mu's lower 95%% bound "
                "(rho = %.3f of mu = %.3f [%.3f, %.3f] req/s)",
                rate, rate / mu.mean, mu.mean, lo, mu.n > 1 ? mu.hi : mu.mean);
  return text;
}

std::string RelaxationInstability(double rate, double mu_rps, double window_s) {
  if (mu_rps <= 0 || rate <= 0 || rate >= mu_rps || window_s <= 0) return "";
  const double rho = rate / mu_rps;
  const double gap = 1 - std::sqrt(rho);
  const double tau_s = 1 / (mu_rps * gap * gap);
  if (window_s >= tau_s) return "";
  char text[240];
  std::snprintf(text, sizeof text,
                "an open queue at rho = %.3f needs about %.0f s to forget its empty "
                "start (M/M/1 relaxation time), longer than the %.0f s arrival window",
                rho, tau_s, window_s);
  return text;
}

}  // namespace servesim
