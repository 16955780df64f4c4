// LinearCostModel: step time as a fixed cost plus terms linear in the batch's
// prompt tokens, decoding sequences and attended KV tokens. Cheap and exact
// to reason about; its coefficients come from a fit or a back-of-envelope.
#pragma once

#include <memory>
#include <string>

#include "sim/cost/cost_model.h"

namespace servesim {

struct LinearParams {
  double step_s = 0;           // per non-empty step
  double prefill_token_s = 0;  // per prompt token computed this step
  double decode_seq_s = 0;     // per decoding sequence (IsDecode)
  double kv_token_s = 0;       // per token attended (context + new)
};

class LinearCostModel : public CostModel {
 public:
  explicit LinearCostModel(const LinearParams& p);
  // Reads {"type": "linear", step_s, prefill_token_s, decode_seq_s,
  // kv_token_s}: step_s in [0, 60] s, the others in [0, 1] s, default 0, at
  // least one > 0.
  static std::unique_ptr<CostModel> FromConfig(const JsonView& cfg);

  StepCost StepTime(const BatchShape& batch) const override;
  bool HasHardwareBasis() const override { return false; }
  std::string Describe() const override;

 private:
  LinearParams p_;
};

}  // namespace servesim
