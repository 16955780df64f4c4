// The stability rules of open-loop points (see stability.h).
#include "sim/analysis/stability.h"

#include <cstdio>

namespace servesim {

std::string RunInstability(const RunSummary& s) {
  if (s.unstable) {
    return s.unstable_reason.empty() ? "the run stopped at its queue bound"
                                     : s.unstable_reason;
  }
  const double first = s.backlog_first_half, second = s.backlog_second_half;
  if (second <= kBacklogFactor * first + kBacklogSlack) return "";
  char text[160];
  std::snprintf(text, sizeof text,
                "the backlog more than doubled: %.1f requests in system over "
                "the arrival window's first half, %.1f over its second",
                first, second);
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

}  // namespace servesim
