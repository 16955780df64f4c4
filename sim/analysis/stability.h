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
//     or flagged it (limits.max_queued, arrivals seeing a growing queue),
//     or the backlog more than doubled: the measured requests in system,
//     time-averaged over the second half of the arrival window (after its
//     lead-in, sim/report/arrival_window.h), exceed twice the first
//     half's plus kBacklogSlack requests. In steady state both halves
//     estimate the same mean; a backlog growing at lambda - mu requests/s
//     adds (lambda - mu) x half a window to the second. Near saturation a
//     stable run's halves still differ a lot (heavy-tailed lengths, a
//     batch whose steps slow as it grows: across the scenarios in
//     scenarios/, up to 1.5x at rho = 0.95), hence a factor of 2: this rule
//     catches clear overload without mu, and rule 1 the rest.
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
inline constexpr double kBacklogSlack =
    5;  // requests: a tiny backlog may double

// Rule 2 for one replication: "" when stable, else why (one clause).
std::string RunInstability(const RunSummary& s);

// Rule 1: "" when rate < mu.lo (mu.mean with one sample; always "" when
// mu.mean <= 0, unknown), else why, e.g. "the offered 47.181 req/s is at or
// above mu's lower 95% bound (rho = 1.000 of mu = 47.181 [46.522, 47.841]
// req/s)".
std::string LoadInstability(double rate, const Interval& mu);

}  // namespace servesim
