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
//                  (QK^T and PV, causal: token i sees c + i keys; MLA and
//                  sliding-window layers as in sim/cost/attention_shape.h)
//   LM head        2 x hidden x vocab / tp, for sequences that sample
// and bytes: the GPU's weights once per step (of an MoE's routed experts
// the expected share its tokens pick: E (1 - (1 - k/E)^T) of E), plus the
// KV cache read (c tokens) and written (n tokens) by each sequence.
#pragma once

#include "sim/cost/attention_shape.h"
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
  // Per step (every step of a run): for a model whose attention FLOPs are
  // exact integer sums (full-context layers, integral coefficients:
  // ExactSums) the sums of attended keys are taken first and scaled once,
  // the same bits as CountEach (its products are exact integers too, below
  // 2^53 in any real step) for a fraction of the work.
  StepWork Count(const BatchShape& batch) const {
    return scale_sums_ ? CountSummed(batch) : CountEach(batch);
  }
  // Each sequence's attention work in turn (attention_shape.h).
  StepWork CountEach(const BatchShape& batch) const;
  StepWork CountSummed(const BatchShape& batch) const;

 private:
  template <bool kSummed>
  StepWork CountAs(const BatchShape& batch) const;

  double linear_flops_per_token_ = 0, head_flops_ = 0;
  double weight_bytes_ = 0, kv_bytes_per_token_ = 0;  // weights: all but routed experts
  double expert_bytes_ = 0;  // the routed experts on this GPU
  int num_experts_ = 1, top_k_ = 1, group_ = 1;
  // Sliding-window layers' KV bytes per attended token (all of them).
  double windowed_kv_bytes_per_token_ = 0;
  double full_layers_ = 0, windowed_layers_ = 0;
  int window_ = 0;
  AttentionShape decode_full_, decode_windowed_, prefill_full_, prefill_windowed_;
  // CountSummed's: whether it applies, and the FLOPs per attended key
  // (prefill: per query-key pair) of the full-context layers.
  bool scale_sums_ = false;
  double prefill_flops_per_pair_ = 0, decode_flops_per_key_ = 0;
};

}  // namespace servesim
