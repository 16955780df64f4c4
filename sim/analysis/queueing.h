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

struct TailPoint {
  double rate = 0, p50 = 0, p99 = 0;
};
// The first rate (points in any order) whose p99 exceeds ratio x its p50:
// where the tail separates from the body and the queue starts to dominate.
std::optional<double> FindKnee(std::vector<TailPoint> points,
                               double ratio = 3.0);

}  // namespace servesim
