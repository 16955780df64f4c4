// CalibratedCostModel: step time from per-op models fitted to timings of
// the real kernels on one GPU (a profile from servesim-calibrate).
//
// A step is priced as the sum of its kernels: every layer runs the four
// layer GEMMs at M = tokens in the step, one decode-attention kernel for
// all decoding sequences, one prefill-attention kernel per prefilling
// sequence and the elementwise ops at M; the LM head runs once at M =
// sampling sequences; tensor parallelism adds the roofline's ring
// all-reduces; the profile's per-step overhead covers the host.
//
// When the scenario's GPU is not the one the profile was measured on, each
// op is projected: scaled by the ratio of its roofline time on the target
// to its roofline time on the measured GPU. Describe() then says PROJECTED
// and quotes the held-out fit error as the (optimistic) error band.
#pragma once

#include <memory>
#include <string>

#include "sim/cost/calibration_profile.h"
#include "sim/cost/cost_model.h"

namespace servesim {

class CalibratedCostModel : public CostModel {
 public:
  // `measured` is the datasheet of the profile's GPU, `target` that of the
  // scenario; they are the same GPU unless projecting. The profile must be
  // for `model` at `tp` (FromConfig checks this; here it is an invariant).
  CalibratedCostModel(CalibrationProfile profile, std::string profile_path,
                      const ModelSpec& model, const GpuSpec& measured,
                      const GpuSpec& target, int tp, HostTiming host = {});
  // Reads {"type": "calibrated", "profile": PATH, "host_gap_s": S}; PATH
  // is resolved like other data paths (working directory, then the
  // repository root). The profile's step_overhead_s is host time, run as
  // `host` says.
  static std::unique_ptr<CostModel> FromConfig(const JsonView& cfg,
                                               const ModelSpec& model,
                                               const GpuSpec& gpu, int tp,
                                               HostWork host);

  StepCost StepTime(const BatchShape& batch) const override;
  std::string Describe() const override;
  // The profile's worst held-out kernel error (its measured ops); a
  // profile projected onto another GPU says so.
  CostModelError Error() const override;

  bool projected() const { return projected_; }
  const CalibrationProfile& profile() const { return profile_; }

 private:
  double Op(ProfileOp op, const OpShape& shape) const;
  double AllReduceTime(double tokens) const;

  CalibrationProfile profile_;
  std::string profile_path_;
  ModelSpec m_;
  GpuSpec measured_, target_;
  int tp_;
  bool projected_;
  HostTiming host_;
};

}  // namespace servesim
