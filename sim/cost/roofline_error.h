// The roofline's error bar: how far its whole-step times are from the
// imported profiles of measured kernels, per GPU, preset and step class.
#pragma once

#include "sim/cost/cost_model.h"
#include "sim/model/model_spec.h"

namespace servesim {

// From `servesim-calibrate compare-models` over every shipped profile of
// the GPU (README, "Cost models": whole step, mean |1 - ratio| for the
// prefill and decode classes), widened to the fitted fp8 kernels' held-out
// error when the model runs fp8. GPUs with no measured table get the
// figures of their generation's measured GPU, flagged as an estimate.
CostModelError RooflineStepError(const GpuSpec& gpu, const std::string& preset,
                                 const ModelSpec& model);

}  // namespace servesim
