// servesim-calibrate compare-models: the roofline's and a calibrated
// (e.g. imported) profile's step times on the same grid of step shapes, and
// their ratio, so a user sees where the datasheet model can be trusted.
//
// Grid: decode batch 1-256 x context 128-32k; one prefill chunk of
// 128-8k tokens after 0-32k cached; mixed steps (a prefill chunk with a
// decoding batch). Ratio = roofline / profile: below 1 the roofline is
// optimistic (predicts a faster step than the measurements).
#pragma once

#include <string>
#include <vector>

#include "sim/cost/calibrated_cost_model.h"
#include "sim/cost/roofline_cost_model.h"

namespace servesim::calibrate {

struct CompareRow {
  std::string step_class;                // "decode", "prefill", "mixed"
  std::string shape;                     // e.g. "batch 64 x ctx 4096"
  double roofline_s = 0, profile_s = 0;  // whole step
  double roofline_kernels_s = 0, profile_kernels_s = 0;  // GPU kernels only
  // GEMMs and attention only: the kernels an imported profile measured
  // (its elementwise term is the datasheet roofline's, not a measurement).
  double roofline_measured_s = 0, profile_measured_s = 0;
  bool extrapolated = false;  // the profile left its measured grid
  double Ratio() const { return roofline_s / profile_s; }
  double KernelRatio() const { return roofline_kernels_s / profile_kernels_s; }
  double MeasuredRatio() const {
    return roofline_measured_s / profile_measured_s;
  }
};

// The step shapes compared, with a label and class for each.
struct CompareShape {
  std::string step_class, label;
  BatchShape batch;
};
std::vector<CompareShape> CompareGrid();

std::vector<CompareRow> CompareModels(const CostModel& roofline,
                                      const CalibratedCostModel& profile,
                                      const ModelSpec& model, int tp);

// Per-step table, then per class the range of both ratios.
std::string CompareTable(const std::vector<CompareRow>& rows,
                         const std::string& title);

}  // namespace servesim::calibrate
