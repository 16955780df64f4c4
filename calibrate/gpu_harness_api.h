// The three entry points of the CUDA timing harness (calibrate/gpu/, built
// only where nvcc exists; SERVESIM_HAVE_GPU_HARNESS is defined then). Only
// these are declared here so the CPU side compiles without CUDA headers.
//
// Contract relied on by calibrate/cli/main.cc: with no usable device,
// QueryDeviceAndCeilings() either throws a std::exception or returns a
// DeviceInfo with sm_count == 0; it never aborts.
#pragma once

#include <vector>

#include "calibrate/op_timing.h"
#include "sim/cost/cost_model.h"
#include "sim/model/model_spec.h"

namespace servesim::calibrate {

DeviceInfo QueryDeviceAndCeilings();
std::vector<OpTiming> TimeOps(const ModelSpec& model, int tp,
                              const std::vector<OpPoint>& points,
                              double budget_s);
// Executes each batch composition as a real forward pass (every layer of the
// model's shard: norms, QKV/O/MLP GEMMs, rotary + paged KV write, decode and
// prefill attention, LM head for the sampling sequences) on random bf16
// weights, captured as a CUDA graph, and times it. `distinct_layers` (if
// non-null) receives how many layers had their own weights and KV cache
// (the rest reuse them cyclically when the GPU cannot hold every layer).
std::vector<StepTiming> TimeSteps(const ModelSpec& model, int tp,
                                  const std::vector<BatchShape>& steps,
                                  double budget_s, int* distinct_layers);

}  // namespace servesim::calibrate
