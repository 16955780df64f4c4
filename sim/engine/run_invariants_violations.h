// The violation collector shared by the run-level invariant checks
// (run_invariants.cc, run_invariants_disagg.cc): internal to them.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "sim/engine/simulation.h"

namespace servesim {

// A run that ended at its bound (duration_s or the queue cap) may leave
// requests and launched steps unfinished.
inline bool StoppedEarly(const SimulationInput& in, const SimulationOutput& out) {
  if (out.stopped_at_queue_cap) return true;
  return in.workload.duration_s > 0 && out.end_time >= FromSeconds(in.workload.duration_s);
}

// Collects violation lines, at most kPerKind per kind of violation (a bug
// that breaks every request would otherwise print a million lines), then
// one line saying how many more there were.
class Violations {
 public:
  static constexpr int kPerKind = 8;

  void Add(const char* kind, const char* fmt, ...) __attribute__((format(printf, 3, 4))) {
    int& n = counts_[kind];
    if (++n > kPerKind) return;
    char buf[512];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    lines_.push_back(std::string(kind) + ": " + buf);
  }

  std::vector<std::string> Take() {
    for (const auto& [kind, n] : counts_) {
      if (n > kPerKind) {
        lines_.push_back(kind + ": ... and " + std::to_string(n - kPerKind) +
                         " more violations of this kind");
      }
    }
    return std::move(lines_);
  }

 private:
  std::vector<std::string> lines_;
  std::map<std::string, int> counts_;
};

// Disaggregated runs (run_invariants_disagg.cc): the pools, the transfers,
// the links and the KV blocks.
struct SimulationInput;
struct SimulationOutput;
void CheckDisaggInvariants(const SimulationInput& in, const SimulationOutput& out,
                           Violations* v);
// Speculative decoding (run_invariants_spec.cc): per-request deliveries,
// the acceptance counters, synchronous scheduling.
void CheckSpecInvariants(const SimulationInput& in, const SimulationOutput& out,
                         Violations* v);
// Whether request r's engine (its replica's pool) decodes speculatively.
bool SpecOn(const SimulationInput& in, int32_t replica);

// The frontend (run_invariants_frontend.cc): engine arrivals after the
// API servers' work, its tokenizer batch and the hop, at most
// ApiServerCount at work at once;
// without one, every request reaches the engine as it is sent.
void CheckFrontend(const SimulationInput& in, const SimulationOutput& out,
                   Violations* v);

// max_concurrency slots (run_invariants_slots.cc): sent first come, first
// served, a wait only while every slot is taken, a send as one is freed.
void CheckSlotWaits(const SimulationInput& in, const SimulationOutput& out, Violations* v);

// KV offload (run_invariants_offload.cc): transfers, stalls, swap space.
void CheckOffloadInvariants(const SimulationInput& in, const SimulationOutput& out,
                            Violations* v);

// Sliding-window KV (run_invariants_windowed.cc): the sequences running
// at every step fit the windowed KV set aside for them.
void CheckWindowedKv(const SimulationInput& in, const SimulationOutput& out, Violations* v);

}  // namespace servesim
