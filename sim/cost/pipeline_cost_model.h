// Pipeline parallelism (hardware.pp, vLLM's --pipeline-parallel-size): the
// model's layers split into stages on their own GPUs (each stage tp GPUs
// wide), a batch passing through them in order, its activations sent from
// each stage to the next. A stage is priced by a cost model of its own
// layers (ModelSpec::PipelineStage: the first holds the embedding, the
// last the LM head); the replica overlaps the stages of successive
// micro-batches (Replica's pipeline clock).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/model/model_spec.h"

namespace servesim {

// The link between consecutive stages, per GPU, one direction.
struct StageLink {
  std::string name;  // "nvswitch", a models/links name, ...
  double bytes_per_s = 0;
  double latency_s = 0;
};

class PipelineCostModel final : public CostModel {
 public:
  // stages[i] prices stage i; the same model may price several stages
  // (equal layer counts and neither end: each step prices it once).
  PipelineCostModel(std::vector<std::shared_ptr<const CostModel>> stages,
                    const ModelSpec& model, int tp, StageLink link);

  int num_stages() const { return static_cast<int>(stages_.size()); }
  // One batch through every stage, unpipelined: the stages' costs summed,
  // the sends between them in comm_s.
  StepCost StepTime(const BatchShape& batch) const override;
  // The same, with each stage's seconds in stage_s[0 .. num_stages()) and
  // one send's in *send_s.
  StepCost Stages(const BatchShape& batch, double* stage_s, double* send_s) const;
  // The activations one stage sends the next for `tokens` tokens.
  double SendSeconds(int64_t tokens) const;
  CostModelError Error() const override { return stages_.front()->Error(); }
  bool HasHardwareBasis() const override { return stages_.front()->HasHardwareBasis(); }
  std::string Describe() const override;
  const StageLink& link() const { return link_; }

 private:
  std::vector<std::shared_ptr<const CostModel>> stages_;
  std::vector<int> first_use_;  // the first stage priced by stages_[i]'s model
  double send_bytes_per_token_ = 0;
  StageLink link_;
  int tp_ = 1;
  std::string model_name_;
};

// m's pipeline, or null when it prices whole steps on one stage.
inline const PipelineCostModel* AsPipeline(const CostModel* m) {
  return dynamic_cast<const PipelineCostModel*>(m);
}

}  // namespace servesim
