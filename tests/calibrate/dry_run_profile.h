// Test helper: a profile fitted on synthetic (roofline) timings, built in
// process the way `servesim-calibrate run --dry-run` builds it.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "calibrate/fit.h"
#include "calibrate/grid.h"
#include "calibrate/profile.h"
#include "calibrate/synthetic_source.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate::testing {

inline CalibrationProfile DryRunProfile(const std::string& model_name, int tp,
                                        const SyntheticOptions& so = {},
                                        const std::string& gpu_name = "h200") {
  const ModelSpec model = LoadModelSpec(model_name);
  const GpuSpec gpu = LoadGpuSpec(gpu_name);
  const auto grid = MakeGrid(model, tp, GridOptions{});
  const auto timings = SyntheticTimings(model, gpu, tp, grid, so);
  ProfileInputs in;
  in.model = model.name;
  in.tp = tp;
  in.gpu = gpu_name;
  in.device = SyntheticDevice(gpu);
  in.synthetic = true;
  in.date = "2025-01-01T00:00:00Z";
  in.step_overhead_source = "roofline default";
  return BuildProfile(in, timings, FitAll(model, tp, timings, FitOptions{}));
}

inline std::string WriteTemp(const CalibrationProfile& p,
                             const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  const Status st = WriteProfile(path, p);
  EXPECT_TRUE(st.ok()) << st.message();
  return path;
}

}  // namespace servesim::calibrate::testing
