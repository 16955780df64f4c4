// RunSimulation: the driver, then the independent run-level checks.
#include "sim/engine/run_invariants.h"
#include "sim/engine/simulation.h"

namespace servesim {

SimulationOutput RunSimulation(const SimulationInput& input) {
  SimulationOutput out = Simulate(input);
  if (input.check_invariants) CheckRunInvariantsOrDie(input, out);
  return out;
}

}  // namespace servesim
