// Validation of a fitted profile on steps it was not fitted to: shapes off
// the calibration grid (odd batch sizes, contexts between grid values,
// mixed prefill+decode), each step composed from its kernels exactly as
// CalibratedCostModel composes it. The "measured" side times the same
// kernels (on the GPU, or synthetically with a fresh seed in a dry run);
// host overhead and all-reduces are left out of both sides because a
// per-kernel timer cannot see them.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/op_timing.h"
#include "sim/cost/calibration_profile.h"

namespace servesim::calibrate {

using TimeFn =
    std::function<std::vector<OpTiming>(const std::vector<OpPoint>&)>;

struct StepCheck {
  std::string name;  // e.g. "decode b=48 ctx=3000"
  double measured_s = 0, predicted_s = 0;
  double ErrorPct() const;  // signed, relative to measured
};

struct ValidationReport {
  std::vector<StepCheck> steps;
  double mape_pct = 0;
  double worst_abs_pct = 0;
};

ValidationReport ValidateProfile(const CalibrationProfile& profile,
                                 const ModelSpec& model, const TimeFn& time);

nlohmann::json ValidationJson(const ValidationReport& r,
                              const CalibrationProfile& profile,
                              const std::string& profile_path);
std::string ValidationTable(const ValidationReport& r);

}  // namespace servesim::calibrate
