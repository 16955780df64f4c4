// How close the attention kernels come to the GPU's measured ceilings:
// bytes and FLOPs of each timed shape (counted by sim/cost/op_features, the
// same counts the fits use), achieved rates, and the fraction of the
// relevant ceiling. Decode attention is memory-bound (GQA: heads/kv_heads
// FLOP per byte of KV), so it is compared with the device-to-device copy
// bandwidth; long prefill is matrix-bound, so it is compared with the
// cuBLAS bf16 GEMM rate. The goals (80% and 40% at the shapes) are
// reported, never asserted: the fractions are measurements.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/op_timing.h"
#include "sim/model/model_spec.h"

namespace servesim::calibrate {

struct KernelSpeedRow {
  OpPoint point;
  double flops = 0, bytes = 0, median_s = 0;
  double achieved_flops = 0, achieved_bytes_per_s = 0;
  // Compared with copy bandwidth when its FLOP/byte is below the ridge
  // point of the two ceilings, else with the GEMM rate.
  bool memory_bound = true;
  double fraction = 0;       // of that ceiling; 0 when it was not measured
  double goal = 0;           // the goal at this shape, 0 if none
};

// The shapes timed: decode attention at batch 64 x 4k context (goal) and
// around it, prefill attention at 8k tokens (goal) and around it.
std::vector<OpPoint> KernelSpeedPoints();

// Throws std::invalid_argument for a timing of an op other than the two
// attention kernels, or with a non-positive time.
std::vector<KernelSpeedRow> KernelSpeed(const ModelSpec& model, int tp,
                                        const DeviceInfo& device,
                                        const std::vector<OpTiming>& timings);

// Context for the report: what was measured, on what, by whom.
struct KernelSpeedContext {
  std::string model, device, driver, ceilings_source;
  int tp = 1;
  bool synthetic = false;
  double copy_bytes_per_s = 0, gemm_bf16_flops = 0;
};

std::string KernelSpeedTable(const std::vector<KernelSpeedRow>& rows,
                             const KernelSpeedContext& ctx);
nlohmann::json KernelSpeedJson(const std::vector<KernelSpeedRow>& rows,
                               const KernelSpeedContext& ctx);

}  // namespace servesim::calibrate
