// RooflineCostModel: step time from the GPU's datasheet and the model's
// shapes, priced kernel by kernel as vLLM runs them. Every kernel costs a
// launch floor plus a smooth crossover of its compute and memory terms
// (sim/cost/kernel_time.h), with efficiencies per op kind fitted once to
// measured vLLM kernel tables (calibrate/roofline_fit.cc); tensor
// parallelism splits the work and adds two all-reduces per layer; the
// host adds a per-step overhead that grows with the batch.
//
// The "datasheet" preset is the model as it was before it knew kernels
// (no floors, max(compute, memory), one elementwise efficiency, a ring
// all-reduce, a flat host overhead): kept for teaching and comparison.
#pragma once

#include <memory>
#include <string>

#include "sim/cost/attention_shape.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/kernel_time.h"

namespace servesim {

// The memory-bound kernels vLLM runs per layer (one token's bytes each):
// fused residual-add + RMSNorm twice (norm part 2h at the RMSNorm
// efficiency, add part 3h at the residual-add one), rotary on q and k,
// the KV-cache write (reshape_and_cache), SiLU-mul; and once per step the
// embedding gather and the final norm. Each launch pays kernel_floor_s.
struct ElementwiseParams {
  double kernel_floor_s = 0;
  double rmsnorm_memory_efficiency = 1;
  double residual_add_memory_efficiency = 1;
  double rotary_memory_efficiency = 1;
  double silu_mul_memory_efficiency = 1;
  double kv_cache_write_memory_efficiency = 1;
  bool kv_cache_write = true;  // the datasheet preset leaves it out
};

// Defaults (the "kernels" preset) are set, with their sources and fits, in
// roofline_cost_model.cc (KernelsPreset).
struct RooflineParams {
  KernelRates gemm;
  KernelRates prefill_attention;  // items: query rows x query heads
  KernelRates decode_attention;   // items: sequences x KV heads
  // fp8 (model.weight_dtype fp8; engine.kv_cache_dtype fp8): vLLM's W8A8
  // CUTLASS GEMMs (used where the GPU has fp8 tensor cores; elsewhere
  // fp8 weights run weight-only at the bf16 GEMM rates) and attention on
  // an fp8 KV cache.
  // vLLM's fused MoE (routing, permutation and both expert GEMMs of a
  // layer priced as one kernel on their summed FLOPs and bytes).
  KernelRates moe;
  // The same for MXFP4 experts (gpt-oss), on their 4.25-bit weights at the
  // bf16 rate: Marlin's fitted rates where vLLM runs Marlin (Ampere, Ada;
  // MarlinMxfp4Rates), the fused MoE's elsewhere.
  KernelRates moe_mxfp4;
  KernelRates gemm_fp8;
  KernelRates prefill_attention_fp8_kv;
  KernelRates decode_attention_fp8_kv;
  ElementwiseParams elementwise;
  AllReduceParams allreduce;
  double step_overhead_s = 0;          // host time per step
  double per_sequence_overhead_s = 0;  // host time per scheduled sequence
  HostTiming host;                     // between steps, or overlapped (gap)
  std::string preset = "kernels";
  std::string generation = "hopper";  // whose measured kernels set the constants

  RooflineParams();  // the kernels preset (Hopper)
  static RooflineParams Kernels();  // Hopper's
  // The kernels preset of a fit (GpuSpec::roofline_fit): each op
  // kind fitted to that generation's measured tables where they have rows
  // enough, Hopper's otherwise.
  static RooflineParams Kernels(const std::string& generation);
  static RooflineParams Datasheet();

 private:
  struct Blank {};
  explicit RooflineParams(Blank) {}  // every field at its zero above
};

// Marlin's MXFP4 fused-MoE rates, fitted to Hopper's measured rows.
const KernelRates& MarlinMxfp4Rates();

// A decode token of a sequence with `context` cached tokens attends to
// context + 1 keys: 4 q_heads d FLOPs per key (QK^T and PV), reads the
// K and V of every key, reads q and writes the output. The model's forms
// count bytes at its KV cache dtype (ModelSpec::kv_bytes).
void AddDecodeAttention(const ModelSpec& m, int tp, double context,
                        AttentionWork* w);
// A chunk of n new tokens after c cached: causal, token j (1..n) attends
// to c + j keys: 4 q_heads d n (c + (n+1)/2) FLOPs. (A tiled kernel skips
// the tiles above the diagonal, so this is also what it computes, up to
// one tile per row block; a count of n (c + n) would put H100/H200's
// measured 16k-token prefills at 1.2-1.3x peak.)
void AddPrefillAttention(const ModelSpec& m, int tp, double n, double c,
                         AttentionWork* w);
// The same per GPU shard's heads (what the measured tables are keyed by).
void AddDecodeAttention(double q_heads, double kv_heads, double head_dim,
                        double dtype_bytes, double context, AttentionWork* w);
void AddPrefillAttention(double q_heads, double kv_heads, double head_dim,
                         double dtype_bytes, double n, double c,
                         AttentionWork* w);
// `seqs` decode tokens whose contexts sum to context_sum, at once: the
// same work as seqs calls of AddDecodeAttention (its terms are linear in
// the context), summed before it is scaled.
void AddDecodeAttentions(double q_heads, double kv_heads, double head_dim,
                         double dtype_bytes, double seqs, double context_sum,
                         AttentionWork* w);

class RooflineCostModel : public CostModel {
 public:
  // tp must be valid for the model (TensorParallelProblem is empty).
  RooflineCostModel(const ModelSpec& model, const GpuSpec& gpu, int tp,
                    const RooflineParams& p);
  // Reads {"type": "roofline", "preset": ..., <parameter keys>}; see
  // FromConfig in roofline_cost_model.cc for every key and its range.
  // symm_mem: the engine's default for symm_mem_allreduce (vLLM true,
  // SGLang false).
  static std::unique_ptr<CostModel> FromConfig(const JsonView& cfg,
                                               const ModelSpec& model,
                                               const GpuSpec& gpu, int tp,
                                               HostWork host, bool symm_mem = true);

  StepCost StepTime(const BatchShape& batch) const override;
  bool PricesRuns() const override { return prices_runs_; }
  std::string Describe() const override;
  CostModelError Error() const override;
  const RooflineParams& params() const { return p_; }

 private:
  double Gemm(double flops, double bytes) const;  // a layer's, in its dtype
  // One GEMM of the layer's linear weights: m tokens x (k -> n), reading
  // `weights` copies of the k x n weight (the active experts').
  double LayerGemm(double m, double n, double k, double weights) const;
  double LayerGemmTime(double tokens) const;
  // The attention projections of one layer (GQA's QKV and O; MLA's
  // down-, up- and output projections), and a dense gated MLP of width
  // `inter` on this GPU.
  double AttentionGemmTime(double tokens) const;
  double DenseMlpTime(double tokens, double inter) const;
  double LmHeadTime(double sampling_seqs) const;
  double AllReduceTime(double tokens) const;
  // Expert parallelism across data-parallel replicas: gathering the
  // group's tokens before the experts and scattering the results after
  // (vLLM's all-gather / reduce-scatter dispatch), for t own tokens.
  double ExpertDispatchTime(double tokens) const;
  double ElementwiseTime(double tokens) const;
  // The step's terms that depend on token counts only, memoised per count
  // (StepTime's hot path; the same doubles as computing them each time).
  struct CountTerms;
  double CountTerm(int which, double count) const;
  double Memo(int which, int64_t count) const;

  ModelSpec m_;
  GpuSpec gpu_;
  int tp_;
  RooflineParams p_;
  // Per-GPU shard sizes under tensor parallelism.
  // inter_: one expert's (or the MLP's) width on a GPU: whole under expert
  // parallelism, else split tp ways; mlp_share_: the MLP width a token
  // brings to a GPU, intermediate / tp either way (the elementwise bytes).
  double q_heads_, kv_heads_, inter_, mlp_share_, vocab_;
  // Layer GEMMs: fp8 W8A8 on fp8 tensor cores (1-byte weights and
  // inputs), fp8 weight-only elsewhere (1-byte weights, bf16 inputs), or
  // bf16; the LM head stays bf16 either way.
  KernelRates layer_gemm_;
  double weight_bytes_, gemm_in_bytes_;
  KernelRates prefill_attention_, decode_attention_;  // for the KV dtype
  // Attention of the full-context layers and of the sliding-window ones.
  AttentionShape decode_full_, decode_windowed_, prefill_full_, prefill_windowed_;
  bool prices_runs_ = false;  // no windowed layers, exact attention sums
  std::shared_ptr<CountTerms> memo_;  // shared by copies (same parameters)
};

// Experts expected to receive at least one of `tokens` tokens when each token
// picks top_k of num_experts uniformly: E * (1 - (1 - k/E)^T).
double ExpectedActiveExperts(int num_experts, int top_k, double tokens);

// Why `tp` cannot shard `model` (heads, KV heads, MLP width must split
// evenly), or "" when it can.
std::string TensorParallelProblem(const ModelSpec& model, int tp);

}  // namespace servesim
