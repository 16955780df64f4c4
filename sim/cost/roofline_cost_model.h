// RooflineCostModel: step time from first principles. Every operator of a
// transformer layer costs the larger of its FLOPs over the GPU's peak and its
// bytes over HBM bandwidth, each derated by a named efficiency; tensor
// parallelism splits the work and adds two ring all-reduces per layer.
#pragma once

#include <memory>
#include <string>

#include "sim/cost/cost_model.h"

namespace servesim {

// Defaults are justified where they are read (roofline_cost_model.cc).
struct RooflineParams {
  double gemm_compute_efficiency = 0.7;
  double gemm_memory_efficiency = 0.8;
  double attention_compute_efficiency = 0.5;
  double attention_memory_efficiency = 0.7;
  double elementwise_memory_efficiency = 0.6;
  double interconnect_efficiency = 0.7;
  double allreduce_latency_s = 8e-6;
  double step_overhead_s = 3e-4;
};

class RooflineCostModel : public CostModel {
 public:
  // tp must be valid for the model (TensorParallelProblem is empty).
  RooflineCostModel(const ModelSpec& model, const GpuSpec& gpu, int tp,
                    const RooflineParams& p);
  // Reads {"type": "roofline", <any RooflineParams field>}; efficiencies in
  // [0.001, 1], latencies in [0, 1] s.
  static std::unique_ptr<CostModel> FromConfig(const JsonView& cfg,
                                               const ModelSpec& model,
                                               const GpuSpec& gpu, int tp);

  StepCost StepTime(const BatchShape& batch) const override;
  std::string Describe() const override;

 private:
  double Gemm(double flops, double bytes) const;
  double LayerGemmTime(double tokens) const;
  double LmHeadTime(double sampling_seqs) const;
  double AllReduceTime(double tokens) const;
  double ElementwiseTime(double tokens) const;

  ModelSpec m_;
  GpuSpec gpu_;
  int tp_;
  RooflineParams p_;
  // Per-GPU shard sizes under tensor parallelism.
  double q_heads_, kv_heads_, inter_, vocab_;
};

// Experts expected to receive at least one of `tokens` tokens when each token
// picks top_k of num_experts uniformly: E * (1 - (1 - k/E)^T).
double ExpectedActiveExperts(int num_experts, int top_k, double tokens);

// Why `tp` cannot shard `model` (heads, KV heads, MLP width must split
// evenly), or "" when it can.
std::string TensorParallelProblem(const ModelSpec& model, int tp);

}  // namespace servesim
