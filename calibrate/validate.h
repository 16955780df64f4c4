// Validation of cost models against executed steps: every sampled batch
// composition (calibrate/step_sample.h) is run as a real forward pass on the
// GPU (or synthetically in a dry run), and each cost model's prediction of
// the same step is compared with the measurement. Both sides are the GPU's
// kernels only: the measurement is a graph-captured forward pass on one
// GPU, so predictions drop their all-reduce and host-overhead terms
// (StepCost::Kernels()).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/op_timing.h"
#include "sim/cost/cost_model.h"

namespace servesim::calibrate {

struct ModelErrors {
  std::string name;         // "calibrated", "roofline"
  std::string description;  // the cost model's Describe()
  std::vector<double> predicted_s;  // per step, kernels only
  std::vector<double> error_pct;    // signed, relative to measured
  double mape_pct = 0;
  double p50_abs_pct = 0, p99_abs_pct = 0;  // of |error|, numpy-linear
  double bias_pct = 0;                      // mean signed error
  std::map<std::string, double> class_mape_pct;  // decode / prefill / mixed
};

struct StepValidation {
  std::vector<BatchShape> steps;
  std::vector<StepTiming> measured;
  std::vector<ModelErrors> models;
};

struct NamedCostModel {
  std::string name;
  const CostModel* model;
};

// Throws std::invalid_argument when sizes differ or a measurement is not
// positive (a step that did not run must not pass as a perfect prediction).
StepValidation ValidateSteps(const std::vector<BatchShape>& steps,
                             const std::vector<StepTiming>& measured,
                             const std::vector<NamedCostModel>& models);

// Where the numbers came from, for the report.
struct ValidationContext {
  std::string profile_path, device, driver, model, scenario, measured_by;
  int tp = 1;
  bool synthetic = false;
  uint64_t seed = 1;
  int64_t simulated_steps = 0;  // steps of the run the sample came from
  int distinct_layers = 0, total_layers = 0;
};

nlohmann::json ValidationJson(const StepValidation& v,
                              const ValidationContext& ctx, int worst);
std::string ValidationTable(const StepValidation& v,
                            const ValidationContext& ctx, int worst);

}  // namespace servesim::calibrate
