// servesim-calibrate compare-engines: two calibrated profiles of one
// deployment (same model, GPU, tp and dtypes; e.g. vLLM's and SGLang's
// imported kernels) priced on the same step shapes, whole step and per
// part (GEMMs, decode and prefill attention, all-reduce), so the kernels'
// difference between engines shows where it comes from. The step shapes
// are compare-models' (CompareGrid).
#pragma once

#include <string>
#include <vector>

#include "sim/cost/calibrated_cost_model.h"

namespace servesim::calibrate {

struct EngineRow {
  std::string step_class, shape;
  StepCost a, b;  // the first and the second profile's step
};

std::vector<EngineRow> CompareEngines(const CalibratedCostModel& a,
                                      const CalibratedCostModel& b);

// Per step: both totals and b / a for the step and each part present
// ("-" where neither prices that part); per class the range of the step
// ratio. label_a, label_b: the profiles as the title names them.
std::string EngineTable(const std::vector<EngineRow>& rows,
                        const std::string& title, const std::string& label_a,
                        const std::string& label_b);

}  // namespace servesim::calibrate
