// The cost model seam: how long one engine iteration (batch step) takes.
//
// BatchShape is plain data: for every scheduled sequence, how many new tokens
// it computes this step and how many tokens of context it already has cached
// (including prefix-cache hits). The cost model knows nothing of schedulers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/json_view.h"
#include "sim/model/model_spec.h"

namespace servesim {

struct SeqWork {
  int32_t new_tokens = 0;      // tokens computed this step (prefill chunk or 1)
  int32_t context_tokens = 0;  // tokens already in the KV cache before them
  bool samples = false;  // produces an output token this step (LM head runs)
};

// A decode step extends a sequence that already has context by one token.
// Everything else that computes tokens is prompt work (prefill), including a
// one-token prompt (new_tokens == 1, context_tokens == 0). All cost models
// classify sequences this way so their breakdowns agree.
inline bool IsDecode(const SeqWork& s) {
  return s.new_tokens == 1 && s.context_tokens > 0;
}

// seqs lists sequences one by one; decodes may also come as an aggregate
// (the scheduler's decode group): decode_seqs more sequences, each with
// new_tokens 1, samples, context > 0, whose contexts sum to
// decode_context. Every cost model prices the two forms identically (its
// decode terms are linear in the context: it sums them as integers), so a
// step costs the same bits whichever form the scheduler used.
// Runs of sequences alike but for their contexts (the speculative decode
// group's verifying members): `count` sequences, each computing new_tokens
// (> 1) tokens and sampling, whose contexts sum to context_sum. Only for a
// cost model that PricesRuns(): it prices a run as its sequences one by
// one, to the bit.
struct SeqRun {
  int32_t new_tokens = 0;
  int64_t count = 0;
  int64_t context_sum = 0;
};

struct BatchShape {
  std::vector<SeqWork> seqs;
  int64_t decode_seqs = 0;
  int64_t decode_context = 0;
  std::vector<SeqRun> runs{};
  size_t size() const {
    size_t n = seqs.size() + static_cast<size_t>(decode_seqs);
    for (const SeqRun& r : runs) n += static_cast<size_t>(r.count);
    return n;
  }
  bool empty() const { return seqs.empty() && decode_seqs == 0 && runs.empty(); }
};

// Where a step's time goes, in seconds.
struct StepCost {
  double gemm_s = 0;          // dense/MoE linear layers incl. LM head
  double attn_prefill_s = 0;  // attention of sequences with new_tokens > 1
  double attn_decode_s = 0;   // attention of sequences with new_tokens == 1
  double comm_s = 0;          // tensor-parallel all-reduces
  double other_s = 0;         // memory-bound rest (norms, rotary, activations)
  double overhead_s = 0;      // per-step fixed cost (launch, scheduling)
  // What one GPU's kernels take: no all-reduces, no host overhead (what a
  // timed, graph-captured forward pass on one GPU measures).
  double Kernels() const {
    return gemm_s + attn_prefill_s + attn_decode_s + other_s;
  }
  StepCost& operator+=(const StepCost& o) {
    gemm_s += o.gemm_s;
    attn_prefill_s += o.attn_prefill_s;
    attn_decode_s += o.attn_decode_s;
    comm_s += o.comm_s;
    other_s += o.other_s;
    overhead_s += o.overhead_s;
    return *this;
  }
  double Total() const {
    return gemm_s + attn_prefill_s + attn_decode_s + comm_s + other_s +
           overhead_s;
  }
};

// How far this model's step times may be from a real GPU's: the mean
// relative error of whole steps against measured kernel timings (README,
// "Cost models"), for prefill-heavy steps (what TTFT is made of) and
// decode steps (TPOT, ITL). Latencies near saturation move more than their
// steps do (queueing amplifies); capacity answers carry it through the
// time-scaling identity (sim/analysis/capacity.h). An empty source means
// unknown (hand-set constants).
struct CostModelError {
  double prefill = 0, decode = 0;  // relative, e.g. 0.074
  std::string source;
  bool known() const { return !source.empty(); }
  double worst() const { return prefill > decode ? prefill : decode; }
};

// When the engine does a step's host work (scheduling, input preparation,
// output processing): between GPU steps (vLLM --no-async-scheduling,
// SGLang --disable-overlap-schedule), or while the GPU runs the step before
// (vLLM's async scheduling, SGLang's overlap scheduler). Overlapped, the
// host shows only as the gap between steps, or as its excess over the
// GPU's step when it is the slower of the two. Cost models whose overhead
// is host time (roofline, calibrated) charge it this way; a linear model's
// per-step constant is not host time and is always charged.
enum class HostWork { kBetweenSteps, kOverlapped };

struct HostTiming {
  HostWork work = HostWork::kBetweenSteps;
  // The GPU's idle time between overlapped steps. UNCERTAIN: the one
  // public figure found is 150-170 us between CUDA-graph decode steps
  // once vLLM's V1 scheduler ran one step ahead (Llama-2-7B, batch 256;
  // vllm-project/vllm#11133, down from 5-6 ms), so 150 us.
  double gap_s = 1.5e-4;
  // What a step of `device_s` on the GPU is charged for `host_s` of host
  // work (never more than host_s).
  double Charged(double host_s, double device_s) const {
    if (work == HostWork::kBetweenSteps) return host_s;
    return std::max(std::min(gap_s, host_s), host_s - device_s);
  }
  // The cost-model line's words for it: "overlapped with the GPU (150 us
  // between steps)", or empty between steps.
  std::string Described() const {
    if (work == HostWork::kBetweenSteps) return "";
    char text[80];
    std::snprintf(text, sizeof text, "overlapped with the GPU (%.3g us between steps)",
                  gap_s * 1e6);
    return text;
  }
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual StepCost StepTime(const BatchShape& batch) const = 0;
  // Whether StepTime takes BatchShape::runs, pricing a run exactly as its
  // sequences one by one (its per-sequence terms linear in the context and
  // summed exactly).
  virtual bool PricesRuns() const { return false; }
  virtual CostModelError Error() const { return {}; }
  // Whether step times come from the GPU's FLOP/s and bytes/s (a roofline,
  // measured kernel tables), so that the model's FLOPs and bytes over them
  // are utilizations (MFU, MBU). A linear model's constants are fitted or
  // set by hand: its MFU can pass 100% and is left out of reports.
  virtual bool HasHardwareBasis() const { return true; }
  // One line for reports, e.g. "roofline (h200, tp=1, gemm eff 0.70 ...)".
  virtual std::string Describe() const = 0;
};

// Builds the cost model named by cfg["type"] ("linear", "roofline" or
// "calibrated").
// Throws ConfigError naming the JSON path for bad or unknown parameters.
// `host` says when the engine runs the host's work (EngineConfig's
// async_scheduling); cfg's host_gap_s, where the model takes it, sets the
// gap. `symm_mem`: whether the engine runs all-reduces on symmetric memory
// by default (vLLM: true; SGLang: false), for the roofline's all-reduce.
std::unique_ptr<CostModel> MakeCostModel(const JsonView& cfg,
                                         const ModelSpec& model,
                                         const GpuSpec& gpu, int tp,
                                         HostWork host, bool symm_mem = true);

}  // namespace servesim
