// Synthetic timings for --dry-run: each op's roofline time (the per-op
// terms of RooflineCostModel's datasheet preset: max(compute, memory) at
// one efficiency pair per op kind, no floors, on a GPU's datasheet numbers)
// plus a launch constant and deterministic noise.
// Nothing here is a measurement; profiles built from it say so.
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/op_timing.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/roofline_cost_model.h"

namespace servesim::calibrate {

inline constexpr const char* kDryRunDeviceName =
    "dry-run (synthetic timings from the roofline model)";

struct SyntheticOptions {
  // Efficiencies as in the roofline's datasheet preset (one elementwise
  // efficiency: all of that preset's elementwise efficiencies are equal).
  RooflineParams roofline = RooflineParams::Datasheet();
  double launch_s = 4e-6;     // added to every kernel (typical launch+ramp)
  double noise_sigma = 0.02;  // log-normal multiplicative noise
  uint64_t seed = 1;
  int repetitions = 20;  // reported only
};

// The noise-free roofline time of one op, without the launch constant.
double RooflineOpTime(const ModelSpec& model, const GpuSpec& gpu, int tp,
                      const OpPoint& p, const RooflineParams& r);

std::vector<OpTiming> SyntheticTimings(const ModelSpec& model,
                                       const GpuSpec& gpu, int tp,
                                       const std::vector<OpPoint>& points,
                                       const SyntheticOptions& o);

// Dry-run stand-in for executed steps: the roofline model's kernel time of
// each step plus one launch constant per kernel of the forward pass, with
// log-normal noise. Not a measurement.
std::vector<StepTiming> SyntheticStepTimings(const ModelSpec& model,
                                             const GpuSpec& gpu, int tp,
                                             const std::vector<BatchShape>& steps,
                                             const SyntheticOptions& o);

// A DeviceInfo that names itself as synthetic, with the GPU's datasheet
// memory and no measured ceilings.
DeviceInfo SyntheticDevice(const GpuSpec& gpu);

}  // namespace servesim::calibrate
