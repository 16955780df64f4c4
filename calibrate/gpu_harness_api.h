// The two entry points of the CUDA timing harness (calibrate/gpu/, built
// only where nvcc exists; SERVESIM_HAVE_GPU_HARNESS is defined then). Only
// these are declared here so the CPU side compiles without CUDA headers.
//
// Contract relied on by calibrate/cli/main.cc: with no usable device,
// QueryDeviceAndCeilings() either throws a std::exception or returns a
// DeviceInfo with sm_count == 0; it never aborts.
#pragma once

#include <vector>

#include "calibrate/op_timing.h"
#include "sim/model/model_spec.h"

namespace servesim::calibrate {

DeviceInfo QueryDeviceAndCeilings();
std::vector<OpTiming> TimeOps(const ModelSpec& model, int tp,
                              const std::vector<OpPoint>& points,
                              double budget_s);

}  // namespace servesim::calibrate
