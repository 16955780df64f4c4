// Pipeline stages' costs (see pipeline_cost_model.h).
#include "sim/cost/pipeline_cost_model.h"

#include <sstream>

#include "sim/core/check.h"

namespace servesim {

PipelineCostModel::PipelineCostModel(std::vector<std::shared_ptr<const CostModel>> stages,
                                     const ModelSpec& model, int tp, StageLink link)
    : stages_(std::move(stages)), link_(std::move(link)), tp_(tp), model_name_(model.Label()) {
  SERVESIM_CHECK(stages_.size() >= 2 && link_.bytes_per_s > 0,
                 "PipelineCostModel: %zu stages over a link of %g B/s", stages_.size(),
                 link_.bytes_per_s);
  for (size_t i = 0; i < stages_.size(); ++i) {
    size_t j = 0;
    while (stages_[j] != stages_[i]) ++j;
    first_use_.push_back(static_cast<int>(j));
  }
  // vLLM sends the hidden states and the residual (bf16) to the next
  // stage; each tensor-parallel GPU sends its 1/tp slice, which the
  // receiving GPUs all-gather (over the faster link inside the stage:
  // not priced).
  send_bytes_per_token_ = 2.0 * model.hidden_size * model.dtype_bytes / tp;
}

double PipelineCostModel::SendSeconds(int64_t tokens) const {
  if (tokens <= 0) return 0;
  return link_.latency_s + static_cast<double>(tokens) * send_bytes_per_token_ / link_.bytes_per_s;
}

StepCost PipelineCostModel::Stages(const BatchShape& batch, double* stage_s,
                                   double* send_s) const {
  StepCost total;
  int64_t tokens = batch.decode_seqs;
  for (const SeqWork& s : batch.seqs) tokens += s.new_tokens;
  for (const SeqRun& r : batch.runs) tokens += static_cast<int64_t>(r.new_tokens) * r.count;
  StepCost one;
  for (size_t i = 0; i < stages_.size(); ++i) {
    // A model shared by several stages is priced once a step.
    if (first_use_[i] == static_cast<int>(i)) one = stages_[i]->StepTime(batch);
    else if (first_use_[i] != first_use_[i - 1]) one = stages_[first_use_[i]]->StepTime(batch);
    stage_s[i] = one.Total();
    total += one;
  }
  *send_s = SendSeconds(tokens);
  total.comm_s += static_cast<double>(stages_.size() - 1) * *send_s;
  return total;
}

StepCost PipelineCostModel::StepTime(const BatchShape& batch) const {
  std::vector<double> stage_s(stages_.size());
  double send_s = 0;
  return Stages(batch, stage_s.data(), &send_s);
}

std::string PipelineCostModel::Describe() const {
  std::ostringstream os;
  os << "pipeline of " << stages_.size() << " stages (tp=" << tp_ << " each, activations over "
     << link_.name << " at " << link_.bytes_per_s / 1e9 << " GB/s + "
     << link_.latency_s * 1e6 << " us); last stage: " << stages_.back()->Describe();
  return os.str();
}

}  // namespace servesim
