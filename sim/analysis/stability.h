// Is an open-loop operating point stable? Queueing theory: a queue offered
// more than it can serve (rho = lambda / mu >= 1) has no steady state; its
// backlog grows with the run length, and so does every latency percentile,
// so no figure measured there answers "what latency at this load". Two
// rules, either makes a point UNSTABLE:
//
//  1. Load (needs the saturation throughput mu, saturation.h): the offered
//     rate is at or above mu's lower 95% bound, i.e. rho >= 1 against that
//     bound. The estimate cannot exclude overload, so a capacity answer
//     must not count on the point. At rho = 1 exactly the backlog of an
//     open queue is a null-recurrent random walk: it grows like the square
//     root of the run length, too slowly for rule 2 to see in one run, but
//     without bound all the same.
//  2. Backlog (each replication, no mu needed): the engine stopped the run
//     at limits.max_queued, or the backlog grew. With b1 and b2 the
//     measured requests in system time-averaged over the first and the
//     second half of the arrival window (after its lead-in,
//     sim/report/arrival_window.h), all of:
//       - b2 > 2 b1: it more than doubled;
//       - b2 - b1 > 3 sqrt(b1 + b2): three standard deviations of two
//         Poisson counts, so a short run's small queue (6 -> 13 requests in
//         a burst) is no alarm;
//       - g = 2 (b2 - b1) / (X x span) >= 2%, X the throughput: a backlog
//         growing at G requests/s adds G x half the span to b2, and
//         G / X = rho - 1 (arrivals = departures + growth), so g estimates
//         rho - 1 and this reads "rho >= 1.02 by the backlog alone".
//     In steady state both halves estimate the same mean, but near
//     saturation a stable run's halves still differ a lot (heavy-tailed
//     lengths, a batch whose steps slow as it grows; across scenarios/, up
//     to 1.5x and g = 2.7% at rho = 0.95): this rule catches clear overload
//     without mu, rule 1 the rest. (The engine's own growth flag, which
//     `run` reports, compares the number in system seen by the last tenth
//     of arrivals with twice the first half's plus max_num_seqs: with one
//     request at a time it fires on short stable runs at rho = 0.95, and
//     with hundreds in a batch it misses rho = 1.05, so it is not used.)
//
// A point at rho = 0.95 can be stable (rule 1 holds when the offered rate
// is below mu's lower bound; rule 2 when the backlog settles); at
// rho >= 1 it never is.
#pragma once

#include <string>

#include "sim/analysis/confidence.h"
#include "sim/report/summary.h"

namespace servesim {

inline constexpr double kBacklogFactor = 2;
inline constexpr double kBacklogSigmas = 3;
inline constexpr double kBacklogGrowth = 0.02;  // of the throughput

// Rule 2's estimate of rho - 1: 2 (second half - first half) / (throughput
// x the counted span); 0 without departures or growth.
double BacklogGrowth(const RunSummary& s);

// Rule 2 for one replication: "" when stable, else why (one clause).
std::string RunInstability(const RunSummary& s);

// Rule 1: "" when rate < mu.lo (mu.mean with one sample; always "" when
// mu.mean <= 0, unknown), else why, e.g. "the offered 47.181 req/s is at or
// above mu's lower 95% bound (rho = 1.000 of mu = 47.181 [46.522, 47.841]
// req/s)".
std::string LoadInstability(double rate, const Interval& mu);

// Rule 3, for open loops compared at one rate (loops): "" when an arrival
// window of window_s is at least the M/M/1 relaxation time at rho =
// rate / mu_rps, 1 / (mu (1 - sqrt rho)^2) (Morse), else why. A shorter
// run still remembers its empty start, so its mean wait depends on the run
// length; the rule looks only at the load and the run, so every arrival
// process at that rate gets the same verdict ("" at rho >= 1: rule 1's).
std::string RelaxationInstability(double rate, double mu_rps, double window_s);

}  // namespace servesim
