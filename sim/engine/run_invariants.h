// Run-level invariants: what must hold for any simulated run, whatever
// mode produced it. They check the output of a whole run (per-request
// timestamps, the executed steps, the counters), not a mechanism, so a mode
// wired wrong (two steps at once on one replica, a request finishing with
// the wrong token count, time running backwards) fails here even when every
// mechanism test passes.
#pragma once

#include <string>
#include <vector>

#include "sim/engine/simulation.h"

namespace servesim {

// Every violated invariant, one line each (empty: the run is sound).
// `out.steps` must have been recorded (SimulationInput::record_steps or
// check_invariants).
std::vector<std::string> CheckRunInvariants(const SimulationInput& in,
                                            const SimulationOutput& out);

// CheckRunInvariants, then on any violation every line on stderr and abort
// (RunSimulation calls it when SimulationInput::check_invariants is set).
void CheckRunInvariantsOrDie(const SimulationInput& in,
                             const SimulationOutput& out);

}  // namespace servesim
