// Building and writing calibration profiles; reading reuses the simulator's
// strict reader (sim/cost/calibration_profile.h), so whatever this writes
// is exactly what `servesim run` accepts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/op_timing.h"
#include "sim/core/status.h"
#include "sim/cost/calibration_profile.h"

namespace servesim::calibrate {

struct ProfileInputs {
  std::string model;
  int tp = 1;
  std::string gpu;  // models/gpu name, e.g. "h200"
  DeviceInfo device;
  bool synthetic = false;
  std::string date;  // ISO 8601 UTC; empty: now
  double step_overhead_s = 3e-4;
  std::string step_overhead_source;
  int holdout_every = 4;
};

CalibrationProfile BuildProfile(const ProfileInputs& in,
                                const std::vector<OpTiming>& timings,
                                std::vector<OpFit> fits);

nlohmann::json ProfileToJson(const CalibrationProfile& p);
Status WriteProfile(const std::string& path, const CalibrationProfile& p);
StatusOr<CalibrationProfile> ReadProfile(const std::string& path);

// Current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string UtcNow();

}  // namespace servesim::calibrate
