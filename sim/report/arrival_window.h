// What flows through the system over a run's arrival window (first to last
// measured arrival) after a lead-in: departures, and the backlog (measured
// requests arrived and not yet finished) time-averaged over each half.
//
// Why a lead-in: departures in (a, b] = arrivals in (a, b] + N(a) - N(b),
// with N the number in system. A run starts empty, so counting from the
// first arrival would miss the N(b) still in system at the end, a bias of
// L / window low at a stable point. From a = the end of the window's first
// tenth, N(a) and N(b) balance in steady state and the departure rate
// estimates the arrival rate; once the backlog grows (the offered rate is
// above what the replica serves) it estimates the service capacity, and
// never counts the requests that finish after arrivals stop. The backlog's
// halves skip the lead-in too, so the fill from empty does not make a
// stable run's first half look lighter than its second.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/time.h"
#include "sim/report/request_digest.h"

namespace servesim {

// Share of the window before departures are counted.
inline constexpr double kLeadInShare = 0.1;

struct WindowFlow {
  double span_s = 0;          // counted part of the window, (a, end]
  int64_t departures = 0;     // measured requests finished in (a, end]
  int64_t output_tokens = 0;  // of those
  // Measured requests in system, time-averaged over [a, mid) and
  // [mid, end), mid halfway; an unfinished one is in system from its
  // arrival on.
  double backlog_first_half = 0, backlog_second_half = 0;
};

// From the completed requests' arrivals and finishes and the arrivals of
// measured requests that never finished; empty unless end >= start + 20 ns.
WindowFlow MeasureWindowFlow(const OutcomeTable& done,
                             const std::vector<SimTime>& unfinished_arrivals,
                             SimTime start, SimTime end);

}  // namespace servesim
