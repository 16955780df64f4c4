// The batch compositions a validation executes: the steps of a simulator run
// of a scenario (mixed prefill chunks and decodes, varied contexts, prefix
// hits as cached context), sampled evenly in time so the steps are weighted
// as the simulation weights them.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/scenario/scenario.h"

namespace servesim::calibrate {

// Forwards to another cost model and keeps a copy of every batch it prices.
// Single-threaded, like one simulation run.
class RecordingCostModel : public CostModel {
 public:
  explicit RecordingCostModel(const CostModel* inner) : inner_(inner) {}
  StepCost StepTime(const BatchShape& batch) const override;
  std::string Describe() const override { return inner_->Describe(); }
  const std::vector<BatchShape>& steps() const { return steps_; }

 private:
  const CostModel* inner_;
  mutable std::vector<BatchShape> steps_;
};

struct StepSample {
  std::vector<BatchShape> steps;
  int64_t simulated_steps = 0;  // non-empty steps of the whole run
};

// Runs the scenario (with its own cost model) and returns `count` of its
// non-empty steps, evenly spaced over the run (all of them when it has
// fewer). Throws std::invalid_argument when the run has no steps.
StepSample SampleSteps(const Scenario& scenario, int count);

// Kind of a step for error breakdowns: "decode", "prefill" or "mixed".
const char* StepClass(const BatchShape& step);
// e.g. "48 decode (ctx 12..3000, mean 1500) + 1 prefill (768 after 1200)".
std::string StepLabel(const BatchShape& step);

}  // namespace servesim::calibrate
