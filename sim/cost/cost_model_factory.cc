// MakeCostModel: picks the cost model named by cfg["type"]. Each model reads
// (and strictly checks) its own keys.
#include "sim/cost/calibrated_cost_model.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/linear_cost_model.h"
#include "sim/cost/roofline_cost_model.h"

namespace servesim {

std::unique_ptr<CostModel> MakeCostModel(const JsonView& cfg,
                                         const ModelSpec& model,
                                         const GpuSpec& gpu, int tp,
                                         HostWork host, bool symm_mem) {
  const std::string type =
      cfg.Choice("type", "", {"linear", "roofline", "calibrated"});
  // A deployment that cannot shard the model is invalid whichever cost model
  // prices it, so refuse here rather than in each model.
  if (const std::string why = TensorParallelProblem(model, tp); !why.empty()) {
    cfg.FailMessage("", why);
  }
  if (type == "linear") return LinearCostModel::FromConfig(cfg);
  if (type == "calibrated") {
    return CalibratedCostModel::FromConfig(cfg, model, gpu, tp, host);
  }
  return RooflineCostModel::FromConfig(cfg, model, gpu, tp, host, symm_mem);
}

}  // namespace servesim
