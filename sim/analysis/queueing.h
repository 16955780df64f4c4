// Queueing-theory references drawn beside the simulated curves, and the
// knee of a latency curve.
#pragma once

#include <optional>
#include <vector>

namespace servesim {

// Mean wait in queue of M/M/1 with utilization rho and mean service time
// es: rho / (1 - rho) * es. NaN when rho >= 1 (no steady state).
double MM1Wait(double rho, double es);
// Pollaczek-Khinchine for M/G/1: lambda E[S^2] / (2 (1 - rho)) =
// rho (1 + c^2) / (2 (1 - rho)) * es. NaN when rho >= 1.
double MG1Wait(double rho, double es, double scv);

// M/D/1 (Poisson arrivals, constant service D, FCFS): P(W <= t) for the
// wait in queue, by Erlang's formula
//   P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/D)} (lambda (kD - t))^k / k!
//               x exp(-lambda (kD - t)),
// with t in units of D. The alternating sum loses precision as t/D grows
// (terms reach exp(2 rho t/D)); in long double it is good to ~1e-8 up to
// t/D = 20 at rho <= 0.9. NaN beyond t/D = 30 or at rho >= 1.
double MD1WaitCdf(double rho, double t_over_d);
// The q-quantile (0 < q < 1) of the M/D/1 response time W + D, in units of
// D; NaN where the CDF above is not trusted.
double MD1ResponseQuantile(double rho, double q);

struct TailPoint {
  double rate = 0, p50 = 0, p99 = 0;
};
// The knee of a latency-vs-load curve: the first rate (points in any
// order) whose p99 exceeds `ratio` x the p99 at the lightest load, where
// queueing starts to dominate the tail. None with fewer than two points.
std::optional<double> FindKnee(std::vector<TailPoint> points, double ratio = 3.0);
// The older per-point diagnostic: p99 > ratio x p50 (the tail separates
// from the body). With heavy-tailed prompts this holds at any load, so it
// is reported per point, never as the knee.
bool TailSeparated(const TailPoint& p, double ratio = 3.0);

}  // namespace servesim
