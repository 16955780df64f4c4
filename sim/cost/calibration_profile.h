// A calibration profile: per-op timing models fitted on one GPU for one
// model at one tensor-parallel degree (written by servesim-calibrate, read
// here so the simulator does not depend on calibrate/). The JSON layout is
// what ParseCalibrationProfile accepts; calibrate/profile.cc writes it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/core/json_view.h"
#include "sim/cost/op_features.h"

namespace servesim {

// The shapes a fitted per-op model can take:
//   kSum:    t = c0 + sum_i c_i x_i                (non-negative c)
//   kMax:    t = c0 + max(c1 x1, c2 x2)            (roofline with a launch
//                                                   constant; 2 features)
//   kInterp: log t piecewise linear and non-decreasing in log size.
enum class FitForm { kSum, kMax, kInterp };
const char* FitFormName(FitForm form);

struct OpFit {
  ProfileOp op = ProfileOp::kGemmQkv;
  FitForm form = FitForm::kSum;
  std::vector<double> coefficients;  // kSum, kMax: c0 first
  // kInterp knots: strictly increasing x, non-decreasing y (natural logs).
  std::vector<double> knots_log_x, knots_log_y;
  // Mean absolute percentage error on grid points held out of the fit, for
  // the chosen form and for every form tried (by FitFormName).
  double heldout_mape_pct = 0;
  std::map<std::string, double> candidate_mape_pct;
  int fit_points = 0;
  int heldout_points = 0;
};

// Predicted seconds for one op with features f. Below the first knot an
// interpolated model stays at the first knot (the kernel is latency-bound
// there); above the last it continues the last segment's slope, clamped to
// [0, 2] in log-log.
double PredictOp(const OpFit& fit, const OpFeatures& f);

struct ProfileDevice {
  std::string name, driver;
  int sm_count = 0;
  double memory_bytes = 0, sm_clock_mhz = 0, mem_clock_mhz = 0;
  double copy_bytes_per_s = 0, gemm_bf16_flops = 0;  // 0: not measured
};

struct ProfileTiming {
  ProfileOp op = ProfileOp::kGemmQkv;
  OpShape shape;
  double median_s = 0, p10_s = 0, p90_s = 0;
  int repetitions = 0;
};

struct CalibrationProfile {
  ProfileDevice device;
  bool synthetic = false;  // true: dry run, not a measurement
  std::string gpu;         // models/gpu name of the device, e.g. "h200"
  std::string date;        // ISO 8601, UTC
  std::string model;       // models/llm name
  std::string dtype = "bf16";
  int tp = 1;
  double step_overhead_s = 3e-4;
  std::string step_overhead_source;
  int holdout_every = 4;
  std::vector<OpFit> ops;  // one per ProfileOp, in ProfileOp order
  std::vector<ProfileTiming> timings;

  const OpFit& Fit(ProfileOp op) const { return ops[static_cast<int>(op)]; }
  // Largest held-out MAPE over the ops: the error band we quote.
  double WorstHeldoutMapePct() const;
};

// Strict reading: unknown keys, missing ops, malformed fits are ConfigErrors
// naming the file and JSON path.
CalibrationProfile ParseCalibrationProfile(const JsonView& v);
CalibrationProfile LoadCalibrationProfile(const std::string& path);

}  // namespace servesim
