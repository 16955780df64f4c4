// RooflineCostModel (see roofline_cost_model.h). Shapes are per GPU: with
// tensor parallelism each GPU holds 1/tp of the heads and MLP columns and
// computes its share for all T tokens of the step.
#include "sim/cost/roofline_cost_model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "sim/core/check.h"
#include "sim/cost/roofline_error.h"

namespace servesim {
namespace {

void CheckSeq(const SeqWork& s) {
  if (s.new_tokens >= 0 && s.context_tokens >= 0) return;
  std::fprintf(stderr, "RooflineCostModel: bad SeqWork new=%d context=%d\n",
               s.new_tokens, s.context_tokens);
  std::abort();
}

// Efficiencies below 0.1% (1e-308 made steps last past int64
// nanoseconds) and latencies above a second are no GPU's.
const Range kEff = Range::Closed(1e-3, 1);
const Range kLatency = Range::Closed(0, 1);
const Range kPerItem = Range::Closed(0, 1e-3);
const Range kPNorm = Range::Closed(0, 64);  // 0: max(compute, memory)

void Read(const JsonView& cfg, const std::string& key, double* v, Range r) {
  *v = cfg.Number(key, *v, r);
}

// <kind>_floor_s, _compute_efficiency, _memory_efficiency, _crossover_p
// and <kind>_<item_key>.
void ReadRates(const JsonView& cfg, const std::string& kind,
               const std::string& item_key, KernelRates* r) {
  Read(cfg, kind + "_floor_s", &r->floor_s, kLatency);
  Read(cfg, kind + "_compute_efficiency", &r->compute_efficiency, kEff);
  Read(cfg, kind + "_memory_efficiency", &r->memory_efficiency, kEff);
  Read(cfg, kind + "_crossover_p", &r->crossover_p, kPNorm);
  if (!item_key.empty()) {
    Read(cfg, kind + "_" + item_key, &r->per_item_s, kPerItem);
  }
}

void ReadKernelKeys(const JsonView& cfg, RooflineParams* p) {
  ReadRates(cfg, "gemm", "", &p->gemm);
  // Keys of the datasheet model set both attention kinds; the specific
  // keys then win.
  for (const char* what : {"compute", "memory"}) {
    const std::string key = std::string("attention_") + what + "_efficiency";
    if (!cfg.Has(key)) continue;
    const double v = cfg.Number(key, 1, kEff);
    double KernelRates::*field = what[0] == 'c'
                                     ? &KernelRates::compute_efficiency
                                     : &KernelRates::memory_efficiency;
    p->prefill_attention.*field = p->decode_attention.*field = v;
  }
  ReadRates(cfg, "prefill_attention", "per_query_head_s",
            &p->prefill_attention);
  ReadRates(cfg, "decode_attention", "per_sequence_kv_head_s",
            &p->decode_attention);
  ReadRates(cfg, "gemm_fp8", "", &p->gemm_fp8);
  ReadRates(cfg, "moe", "", &p->moe);
  ReadRates(cfg, "moe_mxfp4", "", &p->moe_mxfp4);
  ReadRates(cfg, "prefill_attention_fp8_kv", "per_query_head_s",
            &p->prefill_attention_fp8_kv);
  ReadRates(cfg, "decode_attention_fp8_kv", "per_sequence_kv_head_s",
            &p->decode_attention_fp8_kv);
}

void ReadElementwiseKeys(const JsonView& cfg, ElementwiseParams* e) {
  // The datasheet model's one efficiency sets all five.
  if (cfg.Has("elementwise_memory_efficiency")) {
    Read(cfg, "elementwise_memory_efficiency", &e->rmsnorm_memory_efficiency,
         kEff);
    e->residual_add_memory_efficiency = e->rotary_memory_efficiency =
        e->silu_mul_memory_efficiency = e->kv_cache_write_memory_efficiency =
            e->rmsnorm_memory_efficiency;
  }
  Read(cfg, "elementwise_kernel_floor_s", &e->kernel_floor_s, kLatency);
  Read(cfg, "rmsnorm_memory_efficiency", &e->rmsnorm_memory_efficiency, kEff);
  Read(cfg, "residual_add_memory_efficiency",
       &e->residual_add_memory_efficiency, kEff);
  Read(cfg, "rotary_memory_efficiency", &e->rotary_memory_efficiency, kEff);
  Read(cfg, "silu_mul_memory_efficiency", &e->silu_mul_memory_efficiency,
       kEff);
  Read(cfg, "kv_cache_write_memory_efficiency",
       &e->kv_cache_write_memory_efficiency, kEff);
}

void ReadHostAndAllReduceKeys(const JsonView& cfg, RooflineParams* p) {
  AllReduceParams* ar = &p->allreduce;
  // The datasheet model's two keys set both backends.
  if (cfg.Has("interconnect_efficiency")) {
    Read(cfg, "interconnect_efficiency", &ar->custom_efficiency, kEff);
    ar->nccl_efficiency = ar->symm_efficiency = ar->custom_efficiency;
  }
  if (cfg.Has("allreduce_latency_s")) {
    Read(cfg, "allreduce_latency_s", &ar->custom_latency_s, kLatency);
    ar->nccl_latency_s = ar->symm_latency_s = ar->custom_latency_s;
  }
  Read(cfg, "custom_allreduce_latency_s", &ar->custom_latency_s, kLatency);
  Read(cfg, "custom_allreduce_efficiency", &ar->custom_efficiency, kEff);
  Read(cfg, "custom_allreduce_max_bytes", &ar->custom_max_bytes,
       Range::Closed(0, 1e12));
  Read(cfg, "nccl_allreduce_latency_s", &ar->nccl_latency_s, kLatency);
  Read(cfg, "nccl_allreduce_efficiency", &ar->nccl_efficiency, kEff);
  Read(cfg, "symm_allreduce_latency_s", &ar->symm_latency_s, kLatency);
  Read(cfg, "symm_allreduce_efficiency", &ar->symm_efficiency, kEff);
  ar->symm_mem = cfg.Bool("symm_mem_allreduce", ar->symm_mem);
  Read(cfg, "step_overhead_s", &p->step_overhead_s, kLatency);
  Read(cfg, "host_gap_s", &p->host.gap_s, kLatency);
  // 1 ms per sequence is 10x what vLLM v0 spent (vllm#6801).
  Read(cfg, "per_sequence_overhead_s", &p->per_sequence_overhead_s,
       Range::Closed(0, 1e-3));
}

}  // namespace

double ExpectedActiveExperts(int num_experts, int top_k, double tokens) {
  const double e = num_experts;
  return e * (1 - std::pow(1 - top_k / e, tokens));
}

std::string TensorParallelProblem(const ModelSpec& m, int tp) {
  const std::string head =
      "tp=" + std::to_string(tp) + " cannot shard " + m.name + ": ";
  if (tp < 1) return head + "expected tp >= 1";
  if (m.num_heads % tp != 0) {
    return head + "tp must divide num_heads (" + std::to_string(m.num_heads) +
           ")";
  }
  // KV heads are split when tp divides them and replicated when they divide
  // tp; anything else leaves GPUs with uneven KV heads.
  if (m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0) {
    return head + "tp must divide num_kv_heads (" +
           std::to_string(m.num_kv_heads) + ") or be a multiple of it";
  }
  if (m.intermediate_size % tp != 0) {
    return head + "tp must divide intermediate_size (" +
           std::to_string(m.intermediate_size) + ")";
  }
  if (m.DenseIntermediate() % tp != 0) {
    return head + "tp must divide the dense layers' intermediate size (" +
           std::to_string(m.DenseIntermediate()) + ")";
  }
  return "";
}

// Memo of the count-only terms for counts up to kMaxCount (larger ones are
// computed each time), the four terms of a count side by side (a step
// reads one line, not four 128 KiB apart). Slots start at -1 (terms are
// >= 0); threads running simulations of one scenario share the model, and
// a slot is only ever written with the value every thread computes, so
// relaxed atomics suffice (each term is checked on its own).
struct RooflineCostModel::CountTerms {
  static constexpr int kTerms = 4;  // layer GEMMs, LM head, all-reduce, elementwise
  static constexpr int kMaxCount = 16384;
  struct alignas(32) Slot {
    std::atomic<double> term[kTerms];
  };
  std::vector<Slot> slots;
  CountTerms() : slots(kMaxCount + 1) {
    for (Slot& s : slots) {
      for (auto& t : s.term) t.store(-1, std::memory_order_relaxed);
    }
  }
};

double RooflineCostModel::CountTerm(int which, double count) const {
  switch (which) {
    case 0:
      if (m_.dense_layers == 0) return m_.num_layers * LayerGemmTime(count);
      // DeepSeek: dense MLPs in the first layers, the MoE after.
      return m_.MoeLayers() * LayerGemmTime(count) +
             m_.dense_layers * (AttentionGemmTime(count) +
                                DenseMlpTime(count, static_cast<double>(m_.DenseIntermediate()) / tp_));
    case 1: return m_.holds_lm_head ? LmHeadTime(count) : 0;  // pipeline: the last stage's
    case 2:
      if (m_.dense_layers == 0) {
        return m_.num_layers * (2 * AllReduceTime(count) + ExpertDispatchTime(count));
      }
      return m_.num_layers * 2 * AllReduceTime(count) +
             m_.MoeLayers() * ExpertDispatchTime(count);
    default: return ElementwiseTime(count);
  }
}

// StepTime's hot path (inline here, its only caller).
inline double RooflineCostModel::Memo(int which, int64_t count) const {
  if (count < 0 || count > CountTerms::kMaxCount) {
    return CountTerm(which, static_cast<double>(count));
  }
  std::atomic<double>& slot = memo_->slots[static_cast<size_t>(count)].term[which];
  double v = slot.load(std::memory_order_relaxed);
  if (v < 0) {
    v = CountTerm(which, static_cast<double>(count));
    slot.store(v, std::memory_order_relaxed);
  }
  return v;
}

RooflineCostModel::RooflineCostModel(const ModelSpec& model, const GpuSpec& gpu,
                                     int tp, const RooflineParams& p)
    : m_(model), gpu_(gpu), tp_(tp), p_(p), memo_(std::make_shared<CountTerms>()) {
  if (const std::string why = TensorParallelProblem(model, tp); !why.empty()) {
    std::fprintf(stderr, "RooflineCostModel: %s\n", why.c_str());
    std::abort();
  }
  q_heads_ = static_cast<double>(model.num_heads) / tp;
  kv_heads_ = model.KvHeadsPerGpu(tp);
  mlp_share_ = static_cast<double>(model.intermediate_size) / tp;
  inter_ = model.expert_parallel > 1 ? model.intermediate_size : mlp_share_;
  vocab_ = static_cast<double>(model.vocab_size) /
           tp;  // vLLM pads; the pad is noise
  const bool w8a8 = model.fp8_weights() && gpu.fp8_flops > 0;
  layer_gemm_ = w8a8 ? p_.gemm_fp8 : p_.gemm;
  weight_bytes_ = model.weight_bytes;
  gemm_in_bytes_ = w8a8 ? 1 : model.dtype_bytes;
  prefill_attention_ =
      model.fp8_kv() ? p_.prefill_attention_fp8_kv : p_.prefill_attention;
  decode_attention_ =
      model.fp8_kv() ? p_.decode_attention_fp8_kv : p_.decode_attention;
  decode_full_ = DecodeShape(model, tp, false);
  decode_windowed_ = DecodeShape(model, tp, true);
  prefill_full_ = PrefillShape(model, tp, false);
  prefill_windowed_ = PrefillShape(model, tp, true);
  prices_runs_ = !model.has_sliding_window() && ExactSums(prefill_full_);
}

RooflineParams::RooflineParams() { *this = Kernels(); }

// The kernels preset. Fitted constants come from `servesim-calibrate
// fit-roofline` (calibrate/roofline_fit.cc): each op kind's KernelTime
// parameters minimise the squared log error over a seeded random 80%
// (seed 1) of the H100-SXM and H200 rows of aiconfigurator's vLLM 0.24.0
// tables (../shared/calibration-data/aiconfigurator-vllm-0.24.0/, rows
// beyond datasheet peaks dropped); the other 20% and every B200 row are
// held out (README, "Cost models", for the errors).
RooflineParams RooflineParams::Kernels() {
  RooflineParams p{Blank{}};
  p.preset = "kernels";
  // gemm.csv, bf16, n and k in 512..65536, every m (1..32768): fitted.
  // A 3.8 us floor (the measured small-M plateau: 7-16 us for 17-50 MB of
  // weights), 80% of dense peak at large M, 85% of HBM bandwidth when
  // streaming weights, and p = 2.64: at the ridge point a GEMM takes
  // 2^(1/2.64) = 1.30x max(compute, memory).
  p.gemm = {3.8e-6, 0.804, 0.854, 2.64, 0};
  // context_attention.csv (FA3, from an empty cache), head_dim 128, bf16
  // KV, full window, every batch x isl x heads: fitted, with KV reads at
  // decode attention's fitted 93.8% (from an empty cache the bytes grow
  // with the query rows, so the rows cannot tell a memory efficiency from
  // a per-row cost; the per-row cost is the tiles' prologue/epilogue).
  // A 13.8 us floor, 66.7% of peak on the causal FLOP count (the count
  // n (c + n) would need 120-130% of peak on H200's 16k-token rows),
  // 0.29 ns per query row x head (b=32 x 128 tokens: 78 us where the
  // FLOPs need 9 us), terms added (p = 1: the fit's bound).
  p.prefill_attention = {1.38e-5, 0.667, 0.938, 1, 2.9e-10};
  // generation_attention.csv (FA3 decode), head_dim 128, bf16 KV, full
  // window, every batch x context x heads: fitted. An 11.7 us floor per
  // layer (the measured 9-18 us at batch 1, short context), 23.7 ns per
  // sequence x KV head (block-table walk, q load, split-K combine: batch
  // 256 at context 1 takes 67 us on H200), KV reads at 94% of HBM
  // bandwidth, and compute and memory added (p = 1: the fit's bound).
  p.decode_attention = {1.17e-5, 0.851, 0.938, 1, 2.37e-8};
  // Elementwise kernels are in no measured table. The issue that asked for
  // this model (issue 11) reports, from kernel timings held out from this
  // project, 13-29 us per layer for RMSNorm, rotary, SiLU-mul and residual
  // adds at one token, RMSNorm at ~35% of HBM bandwidth and a residual add
  // at ~90%: a 4 us floor per launch (4 of those kernels: 16 us) and those
  // two efficiencies. Rotary (a cos/sin gather per pair) 0.5, SiLU-mul
  // (two reads, one write, vectorised) 0.7 and the KV-cache write (scatter
  // into 16-token blocks) 0.5 are assumptions, not measurements. Inside
  // captured decode graphs, public profiles show 4.0 us for vLLM's RMSNorm
  // and 2.0 us for its fp8 quantization (nm-vllm PR 332), 4.1 us for a
  // fused add + RMSNorm (Megatron-LM PR 6463): 4 us fits the norms and is
  // at the top for the simpler kernels (docs/cost-models.md).
  p.elementwise.kernel_floor_s = 4e-6;
  p.elementwise.rmsnorm_memory_efficiency = 0.35;
  p.elementwise.residual_add_memory_efficiency = 0.9;
  p.elementwise.rotary_memory_efficiency = 0.5;
  p.elementwise.silu_mul_memory_efficiency = 0.7;
  p.elementwise.kv_cache_write_memory_efficiency = 0.5;
  p.elementwise.kv_cache_write = true;
  // custom_allreduce.csv (vllm_graph) below symmetric memory's limit
  // (64, 32 and 64 MiB at 2, 4 and 8 GPUs on Hopper; kernel_time.h) and
  // nccl.csv (all_reduce, half) from 8 MiB, at 2, 4 and 8 GPUs: fitted.
  // The custom all-reduce below 8 MiB: 4.8 us latency, 53% of the NVLink
  // rate on the ring's bus bytes; from 8 MiB (symmetric memory's range,
  // priced by the custom rows): 10.8 us and 49% of the link on the
  // message's own bytes; NCCL (vLLM above the limit, SGLang from 8 MiB):
  // 31 us, 80% (its rows start at 8 MiB, so its latency is loosely
  // determined).
  p.allreduce = {4.8e-6, 0.529, 8.0 * 1024 * 1024, 3.09e-5, 0.798, 1.08e-5, 0.491};
  // Host time per step: scheduling, input preparation, sampling, output
  // processing and the graph launch. UNCERTAIN: no public per-step figure
  // for vLLM v1 was found. 0.3 ms is this project's earlier default (vLLM's
  // v0.6.0 blog, 2024-09-05: on Llama-3-8B/H100 scheduling and input
  // preparation took 29% of a step of a few ms; the v1 blog, 2025-01-24,
  // reports GPU steps of ~5 ms for that model and an engine rebuilt to cut
  // that CPU work). Per sequence: vLLM v0 took ~20 ms at batch 200, i.e.
  // ~100 us per sequence (vllm-project/vllm#6801, 2024-08-08); v1's
  // persistent batch updates only what changed, so 1 us per sequence
  // (0.26 ms at 256) is assumed, to within a factor of a few. Under async
  // scheduling most of it overlaps the GPU (HostTiming, cost_model.h).
  p.step_overhead_s = 3e-4;
  p.per_sequence_overhead_s = 1e-6;
  // fp8, fitted the same way to the fp8 rows of the same tables (gemm.csv
  // gemm_dtype fp8: vLLM's CutlassFP8ScaledMMLinearKernel; the attention
  // tables' kv_cache_dtype fp8 rows). W8A8 GEMMs: a 6.8 us floor, 76% of
  // the dense fp8 peak at large M (H200 measures 1,320 TFLOPS at
  // 16384 x 8192 x 8192), 81% of HBM bandwidth, p = 1.16, and 3.6 ps per
  // input element for quantizing the bf16 activations (items = m k; the
  // fit without it left 24-26% held-out error, with it 16-17%; what
  // remains is mostly narrow GEMMs, which the fp8 kernel runs slower than
  // bf16: H200 at m 16384, k 8192, n 512 measures 346 TFLOPS in fp8 and
  // 688 in bf16, and no term here captures that). Attention on an fp8 cache at fp8 compute: FA3's fp8
  // path reaches only 28-32% of the fp8 peak (about the bf16 kernels'
  // FLOP rate) and 74% of HBM bandwidth on the halved bytes.
  p.gemm_fp8 = {6.82e-6, 0.761, 0.812, 1.16, 3.58e-12, true};
  // moe.csv, Mixtral-8x7B's expert shape (hidden 4096, inter 14336, top-2
  // of 8), bf16, balanced routing, no expert parallelism, moe_tp 1-8:
  // fitted, the whole fused-MoE layer as one kernel on both expert GEMMs'
  // FLOPs and bytes. A 30 us floor (routing, token permutation and the two
  // grouped GEMMs' launches), 65.7% of dense peak, 83.5% of HBM bandwidth,
  // p = 1.99. Held-out error 6.4% / 6.2% on H100 / H200 (the experts as
  // two plain GEMMs: 17% / 14%, both too fast), 24% on B200.
  p.moe = {3.0e-5, 0.657, 0.835, 1.99, 0};
  // MXFP4 experts (gpt-oss): vLLM runs OpenAI's Triton MoE kernels here
  // (mxfp4.py: Marlin only below compute capability 9, or when
  // VLLM_MXFP4_USE_MARLIN is set), which no public table times: the fused
  // MoE's rates on their 4.25-bit bytes, an assumption.
  p.moe_mxfp4 = p.moe;
  p.prefill_attention_fp8_kv = {1.61e-5, 0.317, 0.739, 1, 5.6e-10, true};
  p.decode_attention_fp8_kv = {1.37e-5, 0.279, 0.739, 1, 2.6e-8, true};
  return p;
}

// Per generation: `servesim-calibrate fit-roofline --train-gpu G` (seed 1,
// 80% of G's rows fitted, 20% held out), 2026-12-06, on aiconfigurator's
// measured vLLM tables: A100-SXM (vLLM 0.14.0) for Ampere, L40S for Ada,
// RTX PRO 6000 Server for the workstation Blackwell (sm_120: FlashAttention-2
// and FlashInfer kernels, GDDR7), from ../shared/calibration-data/
// aiconfigurator-vllm-more-gpus/; B200 (vLLM 0.24.0) for the data-centre
// Blackwell (sm_100). Each kind with hundreds of rows is replaced; the
// fused MoE (about 85 rows) only on B200, whose fit kept a launch floor
// (Ada's and sm_120's fits put it at 0), and a fitted crossover exponent
// beyond 100 is the sharp maximum (0). Held-out MAPE per kind (the Hopper
// constants on the same rows) is in docs/cost-models.md.
// Marlin's MXFP4 experts (moe.csv w4a16_mxfp4 rows: 4.25-bit weights
// dequantized to bf16 in the kernel): `servesim-calibrate fit-roofline
// --train-gpu h100-sxm --train-gpu h200` (seed 1, 80% fitted), every
// expert shape the tables time, balanced routing, no expert parallelism,
// moe_tp 1-8, on the 4.25-bit weight bytes and bf16 FLOPs. A 35 us floor,
// 48.6% of dense peak, 61.9% of HBM bandwidth, p = 1.21; held-out error
// 17.2% / 14.8% on H100 / H200, where the bf16 fused-MoE constants gave
// 20.5% / 32.4% (20-32% too fast). Measured on Hopper; vLLM runs Marlin
// for MXFP4 on GPUs below compute capability 9 (Ampere, Ada), which have
// no such rows, so those generations take these constants.
constexpr KernelRates kMarlinMxfp4 = {3.49e-5, 0.486, 0.619, 1.21, 0};

const KernelRates& MarlinMxfp4Rates() { return kMarlinMxfp4; }

RooflineParams RooflineParams::Kernels(const std::string& generation) {
  RooflineParams p = Kernels();
  p.generation = generation;
  if (generation == "ampere" || generation == "ada") p.moe_mxfp4 = kMarlinMxfp4;
  if (generation == "ampere") {
    // No fp8 tensor cores (fp8 weights run W8A16 at the bf16 GEMM rates),
    // no fp8 rows: the fp8 kinds keep Hopper's.
    p.gemm = {5.66e-6, 0.834, 0.765, 1.61, 0};
    p.prefill_attention = {1.4e-5, 0.547, 0.634, 1.68, 5.72e-10};
    p.decode_attention = {1.57e-5, 0.206, 0.634, 3.92, 2.71e-8};
    p.allreduce = {6.01e-6, 0.536, 8.0 * 1024 * 1024, 5.35e-5, 0.69, 6.01e-6, 0.536};
  } else if (generation == "ada") {
    p.gemm = {1.92e-6, 0.625, 0.802, 2.52, 0};
    p.prefill_attention = {8.71e-6, 0.493, 0.863, 1.36, 5.58e-11};
    p.decode_attention = {9.37e-6, 0.128, 0.863, 0, 1.63e-8};
    p.gemm_fp8 = {4.9e-6, 0.669, 0.8, 1, 3.91e-12, true};
    p.prefill_attention_fp8_kv = {1.3e-5, 0.205, 0.925, 1, 1.79e-10, true};
    p.decode_attention_fp8_kv = {1.11e-5, 0.0993, 0.925, 2.67, 1.31e-8, true};
    p.allreduce = {5.32e-6, 0.596, 8.0 * 1024 * 1024, 1.96e-5, 0.137, 5.32e-6, 0.596};
  } else if (generation == "blackwell-rtx") {
    p.gemm = {2.82e-6, 0.859, 0.892, 1.54, 0};
    p.prefill_attention = {9.68e-6, 0.61, 0.841, 1.22, 1.83e-10};
    p.decode_attention = {1.09e-5, 0.19, 0.841, 0, 1.43e-8};
    p.gemm_fp8 = {5.58e-6, 0.981, 0.853, 1.41, 3.34e-12, true};
    p.prefill_attention_fp8_kv = {1.33e-5, 0.246, 1, 1, 1.52e-10, true};
    p.decode_attention_fp8_kv = {1.15e-5, 0.0844, 1, 5.81, 1.09e-8, true};
    p.allreduce = {4.37e-6, 0.627, 8.0 * 1024 * 1024, 2.04e-5, 0.413, 4.37e-6, 0.627};
  } else if (generation == "blackwell") {
    p.gemm = {3.41e-6, 0.72, 0.767, 2.31, 0};
    p.prefill_attention = {1.3e-5, 0.582, 0.953, 14.2, 3.26e-10};
    p.decode_attention = {9.32e-6, 0.154, 0.953, 2.07, 9.52e-9};
    p.gemm_fp8 = {7.17e-6, 0.825, 0.625, 1.28, 2.76e-12, true};
    p.prefill_attention_fp8_kv = {1.34e-5, 0.339, 0.961, 37.7, 4.56e-10, true};
    p.decode_attention_fp8_kv = {9.87e-6, 0.113, 0.961, 1.65, 8.23e-9, true};
    p.allreduce = {7.51e-6, 0.218, 8.0 * 1024 * 1024, 4.24e-5, 0.694, 1.6e-5, 0.374};
    p.moe = {4.25e-6, 0.366, 0.617, 1.92, 0};  // 85 rows, a floor that stands
    // vLLM runs gpt-oss's experts on FlashInfer's TRT-LLM MXFP4 kernels
    // here, not Marlin: no fit of them yet, so MXFP4 experts keep the
    // fused-MoE rates with their bytes, as before the Marlin fit.
    p.moe_mxfp4 = p.moe;
  } else {
    SERVESIM_CHECK(generation == "hopper", "no roofline constants for GPU generation %s",
                   generation.c_str());
  }
  return p;
}

// The model before it knew kernels (servesim before issue 11).
RooflineParams RooflineParams::Datasheet() {
  RooflineParams p{Blank{}};
  p.preset = "datasheet";
  // cuBLAS bf16 GEMMs at large M ~70% of dense peak; weight streaming ~80%
  // of HBM peak.
  p.gemm = {0, 0.7, 0.8, 0, 0};
  // FlashAttention-2/3 at 40-75% of peak; paged KV reads at ~70%.
  p.prefill_attention = {0, 0.5, 0.7, 0, 0};
  p.decode_attention = {0, 0.5, 0.7, 0, 0};
  p.elementwise = {0, 0.6, 0.6, 0.6, 0.6, 0.6, false};
  // A ring all-reduce at 70% of the link with ~8 us latency, for both,
  // at every size (no symmetric-memory range).
  p.allreduce = {8e-6, 0.7, 8.0 * 1024 * 1024, 8e-6, 0.7};
  p.allreduce.symm_mem = false;
  p.step_overhead_s = 3e-4;
  p.per_sequence_overhead_s = 0;
  // fp8 GEMMs at the same efficiencies of the fp8 peak; attention on an
  // fp8 cache as on a bf16 one (only its bytes halve).
  p.gemm_fp8 = p.gemm;
  p.gemm_fp8.fp8_compute = true;
  p.prefill_attention_fp8_kv = p.prefill_attention;
  p.decode_attention_fp8_kv = p.decode_attention;
  p.moe = p.gemm;  // the experts as GEMMs (max over their summed terms)
  p.moe_mxfp4 = p.moe;
  return p;
}

void AddDecodeAttention(double q_heads, double kv_heads, double head_dim,
                        double dtype_bytes, double c, AttentionWork* w) {
  const double q = q_heads, kv = kv_heads, d = head_dim, b = dtype_bytes;
  w->flops += 4 * q * d * (c + 1);
  w->bytes += b * (2 * kv * d * (c + 1) + 2 * q * d);
  w->items += kv;  // per sequence x KV head (GQA packs q heads per KV head)
}

void AddDecodeAttentions(double q_heads, double kv_heads, double head_dim,
                         double dtype_bytes, double seqs, double context_sum,
                         AttentionWork* w) {
  const double q = q_heads, kv = kv_heads, d = head_dim, b = dtype_bytes;
  const double keys = context_sum + seqs;  // sum of (c + 1)
  w->flops += 4 * q * d * keys;
  w->bytes += b * (2 * kv * d * keys + 2 * q * d * seqs);
  w->items += kv * seqs;
}

void AddPrefillAttention(double q_heads, double kv_heads, double head_dim,
                         double dtype_bytes, double n, double c,
                         AttentionWork* w) {
  const double q = q_heads, kv = kv_heads, d = head_dim, b = dtype_bytes;
  w->flops += 4 * q * d * n * (c + (n + 1) / 2);
  w->bytes += b * (2 * kv * d * (c + n) + 2 * q * d * n);
  w->items += n * q;
}

void AddDecodeAttention(const ModelSpec& m, int tp, double c,
                        AttentionWork* w) {
  AddDecodeAttention(static_cast<double>(m.num_heads) / tp, m.KvHeadsPerGpu(tp),
                     m.head_dim, m.kv_bytes, c, w);
}

void AddPrefillAttention(const ModelSpec& m, int tp, double n, double c,
                         AttentionWork* w) {
  AddPrefillAttention(static_cast<double>(m.num_heads) / tp,
                      m.KvHeadsPerGpu(tp), m.head_dim, m.kv_bytes, n, c, w);
}

std::unique_ptr<CostModel> RooflineCostModel::FromConfig(const JsonView& cfg,
                                                         const ModelSpec& model,
                                                         const GpuSpec& gpu,
                                                         int tp, HostWork host,
                                                         bool symm_mem) {
  cfg.AllowKeys(
      {"type", "preset",
       // GEMMs
       "gemm_floor_s", "gemm_compute_efficiency", "gemm_memory_efficiency",
       "gemm_crossover_p",
       // attention (the two un-prefixed keys set both kinds)
       "attention_compute_efficiency", "attention_memory_efficiency",
       "prefill_attention_floor_s", "prefill_attention_compute_efficiency",
       "prefill_attention_memory_efficiency", "prefill_attention_crossover_p",
       "prefill_attention_per_query_head_s", "decode_attention_floor_s",
       "decode_attention_compute_efficiency",
       "decode_attention_memory_efficiency", "decode_attention_crossover_p",
       "decode_attention_per_sequence_kv_head_s",
       // fused MoE
       "moe_floor_s", "moe_compute_efficiency", "moe_memory_efficiency", "moe_crossover_p",
       "moe_mxfp4_floor_s", "moe_mxfp4_compute_efficiency", "moe_mxfp4_memory_efficiency",
       "moe_mxfp4_crossover_p",
       // fp8 GEMMs and attention on an fp8 KV cache
       "gemm_fp8_floor_s", "gemm_fp8_compute_efficiency",
       "gemm_fp8_memory_efficiency", "gemm_fp8_crossover_p",
       "prefill_attention_fp8_kv_floor_s",
       "prefill_attention_fp8_kv_compute_efficiency",
       "prefill_attention_fp8_kv_memory_efficiency",
       "prefill_attention_fp8_kv_crossover_p",
       "prefill_attention_fp8_kv_per_query_head_s",
       "decode_attention_fp8_kv_floor_s",
       "decode_attention_fp8_kv_compute_efficiency",
       "decode_attention_fp8_kv_memory_efficiency",
       "decode_attention_fp8_kv_crossover_p",
       "decode_attention_fp8_kv_per_sequence_kv_head_s",
       // elementwise (the first efficiency key sets all five)
       "elementwise_memory_efficiency", "elementwise_kernel_floor_s",
       "rmsnorm_memory_efficiency", "residual_add_memory_efficiency",
       "rotary_memory_efficiency", "silu_mul_memory_efficiency",
       "kv_cache_write_memory_efficiency",
       // all-reduce (the first two keys set both backends)
       "interconnect_efficiency", "allreduce_latency_s",
       "custom_allreduce_latency_s", "custom_allreduce_efficiency",
       "custom_allreduce_max_bytes", "nccl_allreduce_latency_s",
       "nccl_allreduce_efficiency", "symm_allreduce_latency_s",
       "symm_allreduce_efficiency", "symm_mem_allreduce",
       // host
       "step_overhead_s", "per_sequence_overhead_s", "host_gap_s"});
  const std::string preset =
      cfg.Choice("preset", "kernels", {"kernels", "datasheet"});
  RooflineParams p = preset == "datasheet" ? RooflineParams::Datasheet()
                                           : RooflineParams::Kernels(gpu.roofline_fit);
  p.allreduce.symm_mem = p.allreduce.symm_mem && symm_mem;
  ReadKernelKeys(cfg, &p);
  ReadElementwiseKeys(cfg, &p.elementwise);
  ReadHostAndAllReduceKeys(cfg, &p);
  p.host.work = host;
  if (const std::string why = TensorParallelProblem(model, tp); !why.empty()) {
    cfg.FailMessage("", why);
  }
  return std::make_unique<RooflineCostModel>(model, gpu, tp, p);
}

double RooflineCostModel::Gemm(double flops, double bytes) const {
  return KernelTime(p_.gemm, gpu_, flops, bytes);
}

// QKV, O, (router,) gate+up and down projections of one layer for T tokens.
// Bytes are weights read once plus activations in and out (inputs in the
// GEMM's input dtype, outputs bf16).
double RooflineCostModel::LayerGemm(double m, double n, double k, double weights) const {
  const double b = m_.dtype_bytes;
  const double w = weight_bytes_, in = gemm_in_bytes_;
  // W8A8 quantizes the m x k input first (KernelRates::per_item_s).
  const double quantized = in < b ? 1 : 0;
  return KernelTime(layer_gemm_, gpu_, 2 * m * n * k,
                    w * (weights * k * n) + in * m * k + b * m * n, quantized * m * k);
}

double RooflineCostModel::AttentionGemmTime(double t) const {
  const auto layer_gemm = [this](double m, double n, double k, double weights) {
    return LayerGemm(m, n, k, weights);
  };
  const double h = m_.hidden_size, d = m_.head_dim;
  if (m_.is_mla()) {
    // vLLM's MLA: q_a and kv_a fused and replicated (h -> q_lora_rank +
    // kv_lora_rank + rope), q_b (q_lora_rank -> heads x head_dim), the
    // per-head latent up-projections W_UK and W_UV (absorbed into the
    // query and output in decode, applied to new keys and values in
    // prefill: the same weights and FLOPs a token), and O.
    const double lora_q = m_.q_lora_rank, lora_kv = m_.kv_lora_rank;
    const double rope = m_.qk_rope_head_dim, nope = d - rope, v = m_.v_head_dim;
    double time = layer_gemm(t, lora_q + lora_kv + rope, h, 1);
    time += lora_q > 0 ? layer_gemm(t, q_heads_ * d, lora_q, 1) : layer_gemm(t, q_heads_ * d, h, 1);
    time += layer_gemm(t, q_heads_ * (nope + v), lora_kv, 1);
    return time + layer_gemm(t, h, q_heads_ * v, 1);
  }
  const double qkv = (q_heads_ + 2 * kv_heads_) * d;
  const double q = q_heads_ * d;
  return layer_gemm(t, qkv, h, 1) + layer_gemm(t, h, q, 1);
}

double RooflineCostModel::DenseMlpTime(double t, double inter) const {
  const auto layer_gemm = [this](double m, double n, double k, double weights) {
    return LayerGemm(m, n, k, weights);
  };
  const double h = m_.hidden_size;
  return layer_gemm(t, 2 * inter, h, 1) + layer_gemm(t, h, inter, 1);
}

double RooflineCostModel::LayerGemmTime(double t) const {
  const auto layer_gemm = [this](double m, double n, double k, double weights) {
    return LayerGemm(m, n, k, weights);
  };
  const double h = m_.hidden_size;
  const double b = m_.dtype_bytes;
  double time = AttentionGemmTime(t);
  if (m_.shared_experts > 0) {
    // Shared experts: a dense MLP every token passes, split tp ways.
    time += DenseMlpTime(t, static_cast<double>(m_.shared_experts) * m_.intermediate_size / tp_);
  }
  // A dense MLP is the one-expert case: every token, all weights.
  double routed = t, active = 1;
  if (m_.is_moe()) {
    // The router stays bf16 in vLLM's fp8 checkpoints.
    const double e = m_.num_experts;
    time += Gemm(2 * t * h * e, b * (h * e + t * h + t * e));
    routed = t * m_.experts_per_token;
    active = ExpectedActiveExperts(m_.num_experts, m_.experts_per_token, t);
    if (m_.expert_parallel > 1) {
      // Whole experts, num_experts / ep here, serving the group's tokens:
      // the ep / tp replicas' batches (taken as equal to this one) routed
      // evenly, so each GPU computes t x top-k / tp of them.
      const double group = t * m_.ExpertDataParallel(tp_);
      routed = t * m_.experts_per_token / tp_;
      active = ExpectedActiveExperts(m_.num_experts, m_.experts_per_token, group) /
               m_.expert_parallel;
    }
  }
  const double i = inter_;
  if (m_.is_moe() && !m_.fp8_weights()) {
    // vLLM's fused MoE: one kernel's worth of work for both expert GEMMs
    // (fitted to the measured fused-MoE rows; fp8 experts keep the W8A8
    // GEMM rates, the tables' fp8 MoE rows are not fitted yet). MXFP4
    // experts (gpt-oss) read 4.25-bit weights and compute at the bf16
    // rate (vLLM upcasts them in the kernel on Hopper).
    const double flops = 2 * routed * h * 2 * i + 2 * routed * i * h;
    if (!m_.expert_weight_dtype.empty()) {
      const double we = m_.ExpertWeightBytes();
      const double bytes = we * (active * h * 2 * i + active * i * h) +
                           b * (routed * h + routed * 2 * i + routed * i + routed * h);
      return time + KernelTime(p_.moe_mxfp4, gpu_, flops, bytes);
    }
    const double bytes = b * (active * h * 2 * i + routed * h + routed * 2 * i) +
                         b * (active * i * h + routed * i + routed * h);
    return time + KernelTime(p_.moe, gpu_, flops, bytes);
  }
  time += layer_gemm(routed, 2 * i, h, active) + layer_gemm(routed, h, i, active);
  return time;
}


double RooflineCostModel::LmHeadTime(double s) const {
  if (s == 0) return 0;
  const double h = m_.hidden_size, v = vocab_, b = m_.dtype_bytes;
  return Gemm(2 * s * h * v, b * (v * h + s * h + s * v));
}

double RooflineCostModel::ExpertDispatchTime(double t) const {
  const int dp = m_.ExpertDataParallel(tp_);
  if (dp <= 1 || t <= 0) return 0;
  // Each GPU receives the other replicas' hidden states (bf16) before the
  // experts and sends theirs back after: two NCCL collectives per layer.
  const AllReduceParams& a = p_.allreduce;
  const double bytes = (dp - 1) * t * m_.hidden_size * m_.dtype_bytes;
  const double link = AllReduceLinkBytesPerS(gpu_, m_.expert_parallel);
  return 2 * (a.nccl_latency_s + bytes / (link * a.nccl_efficiency));
}

double RooflineCostModel::AllReduceTime(double t) const {
  if (tp_ == 1) return 0;
  return servesim::AllReduceTime(p_.allreduce, gpu_, tp_,
                                 t * m_.hidden_size * m_.dtype_bytes);
}

// The elementwise kernels of ElementwiseParams, for T tokens.
double RooflineCostModel::ElementwiseTime(double t) const {
  const double h = m_.hidden_size, d = m_.head_dim, b = m_.dtype_bytes;
  const ElementwiseParams& e = p_.elementwise;
  const double bw = gpu_.hbm_bytes_per_s;
  auto bytes_at = [&](double per_token, double eff) {
    return b * t * per_token / (bw * eff);
  };
  const double norm = bytes_at(2 * h, e.rmsnorm_memory_efficiency);
  const double add = bytes_at(3 * h, e.residual_add_memory_efficiency);
  // Rotary on every query head and the cached key heads (MLA: only the
  // rope part of each query head and of the one shared key).
  const double rotary = m_.is_mla() ? 2 * (q_heads_ + 1) * m_.qk_rope_head_dim
                                    : 2 * (q_heads_ + kv_heads_) * d;
  // A token's MLP width here: its routed experts and the shared ones.
  const double widths = m_.experts_per_token + m_.shared_experts;
  double layer =
      2 * (e.kernel_floor_s + norm + add) + e.kernel_floor_s +
      bytes_at(rotary, e.rotary_memory_efficiency) +
      e.kernel_floor_s +
      bytes_at(3 * mlp_share_ * widths, e.silu_mul_memory_efficiency);
  if (e.kv_cache_write) {
    // Read the new K and V, write them into the paged cache
    // (K and V read in bf16, written in the cache's dtype; MLA: the latent.)
    const double cached = m_.is_mla() ? m_.KvElementsPerTokenPerLayer(tp_) : 2 * kv_heads_ * d;
    layer += e.kernel_floor_s +
             bytes_at(cached * (1 + m_.kv_bytes / b),
                      e.kv_cache_write_memory_efficiency);
  }
  // Embedding gather (a copy) and the final norm (a pipeline's first and
  // last stage).
  const double gather = bytes_at(2 * h, e.residual_add_memory_efficiency);
  const double final_norm = bytes_at(2 * h, e.rmsnorm_memory_efficiency);
  const double once = m_.holds_embedding && m_.holds_lm_head
                          ? 2 * e.kernel_floor_s + gather + final_norm
                          : (m_.holds_embedding ? e.kernel_floor_s + gather : 0) +
                                (m_.holds_lm_head ? e.kernel_floor_s + final_norm : 0);
  return m_.num_layers * layer + once;
}

StepCost RooflineCostModel::StepTime(const BatchShape& batch) const {
  // Counts as integers: decode attention is linear in each sequence's
  // context, so it is priced from the number of decodes and the sum of
  // their contexts (the same bits whether they come one by one or as the
  // scheduler's aggregate).
  int64_t tokens = batch.decode_seqs, sampling = batch.decode_seqs;
  int64_t seqs = batch.decode_seqs, decodes = batch.decode_seqs;
  int64_t decode_context = batch.decode_context;
  // Per-layer attention work; prefill and decode are one kernel each (in
  // the full-context layers and in the sliding-window ones).
  AttentionWork pre, pre_windowed;
  const bool windows = m_.has_sliding_window();
  bool any_pre = false;
  for (const SeqWork& s : batch.seqs) {
    CheckSeq(s);
    if (s.new_tokens == 0) continue;
    tokens += s.new_tokens;
    seqs += 1;
    if (s.samples) sampling += 1;
    if (IsDecode(s)) {
      ++decodes;
      decode_context += s.context_tokens;
    } else {
      AddPrefillWork(prefill_full_, s.new_tokens, s.context_tokens, &pre);
      if (windows) {
        AddPrefillWork(prefill_windowed_, s.new_tokens, s.context_tokens, &pre_windowed);
      }
      any_pre = true;
    }
  }
  if (!batch.runs.empty()) [[unlikely]] {  // only speculative decoding's
    for (const SeqRun& r : batch.runs) {
      SERVESIM_CHECK(prices_runs_ && r.new_tokens > 1 && r.count > 0 && r.context_sum >= 0,
                     "RooflineCostModel: a run it cannot price (%d tokens x %lld)",
                     r.new_tokens, static_cast<long long>(r.count));
      tokens += r.new_tokens * r.count;
      seqs += r.count;
      sampling += r.count;
      AddPrefillRun(prefill_full_, r.new_tokens, static_cast<double>(r.count),
                    static_cast<double>(r.context_sum), &pre);
    }
    any_pre = true;
  }
  StepCost cost;
  if (tokens == 0) return cost;
  const double layers = m_.FullAttentionLayers();
  const double windowed_layers = m_.sliding_window_layers;
  cost.gemm_s = Memo(0, tokens) + Memo(1, sampling);
  if (any_pre) {
    cost.attn_prefill_s = layers * KernelTime(prefill_attention_, gpu_,
                                              pre.flops, pre.bytes, pre.items);
    if (windows) {
      cost.attn_prefill_s += windowed_layers * KernelTime(prefill_attention_, gpu_,
                                                          pre_windowed.flops, pre_windowed.bytes,
                                                          pre_windowed.items);
    }
  }
  if (decodes > 0) {
    AttentionWork dec;
    const double n = static_cast<double>(decodes), ctx = static_cast<double>(decode_context);
    AddDecodeWork(decode_full_, n, ctx, &dec);
    cost.attn_decode_s = layers * KernelTime(decode_attention_, gpu_,
                                             dec.flops, dec.bytes, dec.items);
    if (windows) {
      AttentionWork win;
      AddDecodeWork(decode_windowed_, n, ctx, &win);
      cost.attn_decode_s +=
          windowed_layers * KernelTime(decode_attention_, gpu_, win.flops, win.bytes, win.items);
    }
  }
  cost.comm_s = Memo(2, tokens);  // after attention and MLP
  cost.other_s = Memo(3, tokens);
  // Last: overlapped host work is charged against the GPU's time.
  cost.overhead_s = p_.host.Charged(
      p_.step_overhead_s + p_.per_sequence_overhead_s * static_cast<double>(seqs), cost.Total());
  return cost;
}

CostModelError RooflineCostModel::Error() const {
  return RooflineStepError(gpu_, p_.preset, m_);
}

std::string RooflineCostModel::Describe() const {
  std::ostringstream os;
  os.precision(3);
  auto rates = [&](const char* what, const KernelRates& r) {
    os << "; " << what << " floor " << r.floor_s * 1e6 << " us, eff "
       << r.compute_efficiency << " compute / " << r.memory_efficiency
       << " memory";
    if (r.crossover_p > 0) os << ", p " << r.crossover_p;
  };
  os << "roofline (" << m_.name << " on " << gpu_.name << ", tp=" << tp_;
  if (m_.expert_parallel > 1) {
    os << ", ep=" << m_.expert_parallel << " (" << m_.num_experts / m_.expert_parallel
       << " whole experts a GPU";
    if (m_.ExpertDataParallel(tp_) > 1) {
      os << ", tokens gathered from " << m_.ExpertDataParallel(tp_)
         << " data-parallel replicas by NCCL all-gather / reduce-scatter";
    }
    os << ")";
  }
  os << ", " << p_.preset << " preset";
  if (p_.preset == "kernels") os << " (" << p_.generation << " constants)";
  const bool w8a8 = gemm_in_bytes_ < m_.dtype_bytes;
  rates(w8a8                ? "fp8 W8A8 gemm"
        : m_.fp8_weights()  ? "fp8 weight-only gemm (bf16 rates)"
                            : "gemm",
        layer_gemm_);
  rates(m_.fp8_kv() ? "prefill attention (fp8 KV)" : "prefill attention",
        prefill_attention_);
  rates(m_.fp8_kv() ? "decode attention (fp8 KV)" : "decode attention",
        decode_attention_);
  const ElementwiseParams& e = p_.elementwise;
  os << "; elementwise floor " << e.kernel_floor_s * 1e6 << " us, rmsnorm "
     << e.rmsnorm_memory_efficiency << " / residual add "
     << e.residual_add_memory_efficiency << " of HBM";
  if (tp_ > 1) {
    os << "; all-reduce over " << gpu_.interconnect_topology << ": "
       << (CustomAllReduceRuns(gpu_, tp_) ? "custom " : "")
       << p_.allreduce.custom_latency_s * 1e6 << " us / "
       << p_.allreduce.custom_efficiency;
    const double own = OwnAllReduceMaxBytes(p_.allreduce, gpu_, tp_);
    if (own > p_.allreduce.custom_max_bytes) {
      os << ", symmetric memory " << p_.allreduce.symm_latency_s * 1e6 << " us / "
         << p_.allreduce.symm_efficiency << " up to " << own / (1024 * 1024) << " MiB";
    }
    os << ", nccl " << p_.allreduce.nccl_latency_s * 1e6 << " us / "
       << p_.allreduce.nccl_efficiency;
  }
  os << "; host " << p_.step_overhead_s * 1e6 << " us + "
     << p_.per_sequence_overhead_s * 1e6 << " us/seq";
  if (const std::string overlap = p_.host.Described(); !overlap.empty()) os << ", " << overlap;
  os << ")";
  return os.str();
}

}  // namespace servesim
