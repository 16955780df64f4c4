// Departures and backlog over the arrival window (see arrival_window.h).
#include "sim/report/arrival_window.h"

#include <algorithm>

namespace servesim {
namespace {

// Time [from, to) spends inside [lo, hi), in ns (0 when apart).
inline SimTime Overlap(SimTime from, SimTime to, SimTime lo, SimTime hi) {
  return std::max<SimTime>(0, std::min(to, hi) - std::max(from, lo));
}

}  // namespace

WindowFlow MeasureWindowFlow(const OutcomeTable& done,
                             const std::vector<SimTime>& unfinished_arrivals,
                             SimTime start, SimTime end) {
  WindowFlow f;
  if (end - start < 20) return f;  // no two halves after the lead-in
  const SimTime lead =
      start + static_cast<SimTime>(kLeadInShare * (end - start));
  const SimTime mid = lead + (end - lead) / 2;
  // Request-nanoseconds in system over each half.
  double first = 0, second = 0;
  int64_t departures = 0, tokens = 0;
  done.ForEachChunk([&](const OutcomeTable::Chunk& c, size_t m) {
    for (size_t j = 0; j < m; ++j) {
      const SimTime a = c.arrival[j], d = c.finish[j];
      first += static_cast<double>(Overlap(a, d, lead, mid));
      second += static_cast<double>(Overlap(a, d, mid, end));
      const bool counted = d > lead && d <= end;
      departures += counted;
      tokens += counted ? c.output_len[j] : 0;
    }
  });
  for (const SimTime a : unfinished_arrivals) {
    first += static_cast<double>(Overlap(a, end, lead, mid));
    second += static_cast<double>(Overlap(a, end, mid, end));
  }
  f.span_s = ToSeconds(end - lead);
  f.departures = departures;
  f.output_tokens = tokens;
  f.backlog_first_half = first / static_cast<double>(mid - lead);
  f.backlog_second_half = second / static_cast<double>(end - mid);
  return f;
}

}  // namespace servesim
