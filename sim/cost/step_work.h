// The work one engine step asks of one GPU, counted from the model alone
// (independent of any cost model's timing): model FLOPs and the HBM bytes
// a step must at least move. Time-averaged over a run they give model
// FLOPs utilization (MFU, Chowdhery et al. 2022, PaLM, appendix B: FLOPs
// the model needs / peak FLOP/s) and memory-bandwidth utilization (MBU:
// bytes that must move / peak HBM bandwidth), the load figures that mean
// something where the engine's busy share is 100% whenever a batch exists.
//
// Per GPU at tensor-parallel degree tp, for every scheduled sequence with n
// new tokens after c tokens of context:
//   linear layers  2 x active params per layer x layers x n / tp
//   attention      4 x heads x head_dim x layers x n x (c + (n + 1) / 2) / tp
//                  (QK^T and PV, causal: token i sees c + i keys)
//   LM head        2 x hidden x vocab / tp, for sequences that sample
// and bytes: the GPU's weights once per step (all experts of an MoE: a
// large batch touches them all), plus the KV cache read (c tokens) and
// written (n tokens) by each sequence.
#pragma once

#include "sim/cost/cost_model.h"
#include "sim/model/model_spec.h"

namespace servesim {

struct StepWork {
  double flops = 0;      // per GPU
  double hbm_bytes = 0;  // per GPU
};

class StepWorkCounter {
 public:
  StepWorkCounter(const ModelSpec& model, int tp);
  StepWork Count(const BatchShape& batch) const;

 private:
  double linear_flops_per_token_ = 0, attn_flops_per_pair_ = 0, head_flops_ = 0;
  double weight_bytes_ = 0, kv_bytes_per_token_ = 0;
};

}  // namespace servesim
