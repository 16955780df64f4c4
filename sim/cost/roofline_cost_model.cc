// RooflineCostModel (see roofline_cost_model.h). Shapes are per GPU: with
// tensor parallelism each GPU holds 1/tp of the heads and MLP columns and
// computes its share for all T tokens of the step.
#include "sim/cost/roofline_cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace servesim {
namespace {

void CheckSeq(const SeqWork& s) {
  if (s.new_tokens >= 0 && s.context_tokens >= 0) return;
  std::fprintf(stderr, "RooflineCostModel: bad SeqWork new=%d context=%d\n",
               s.new_tokens, s.context_tokens);
  std::abort();
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
  return "";
}

RooflineCostModel::RooflineCostModel(const ModelSpec& model, const GpuSpec& gpu,
                                     int tp, const RooflineParams& p)
    : m_(model), gpu_(gpu), tp_(tp), p_(p) {
  if (const std::string why = TensorParallelProblem(model, tp); !why.empty()) {
    std::fprintf(stderr, "RooflineCostModel: %s\n", why.c_str());
    std::abort();
  }
  q_heads_ = static_cast<double>(model.num_heads) / tp;
  kv_heads_ = model.KvHeadsPerGpu(tp);
  inter_ = static_cast<double>(model.intermediate_size) / tp;
  vocab_ = static_cast<double>(model.vocab_size) /
           tp;  // vLLM pads; the pad is noise
}

std::unique_ptr<CostModel> RooflineCostModel::FromConfig(const JsonView& cfg,
                                                         const ModelSpec& model,
                                                         const GpuSpec& gpu,
                                                         int tp) {
  cfg.AllowKeys({"type", "gemm_compute_efficiency", "gemm_memory_efficiency",
                 "attention_compute_efficiency", "attention_memory_efficiency",
                 "elementwise_memory_efficiency", "interconnect_efficiency",
                 "allreduce_latency_s", "step_overhead_s"});
  // Efficiencies below 0.1% (1e-308 made steps last past int64
  // nanoseconds) and latencies above a second are no GPU's.
  const Range eff = Range::Closed(1e-3, 1);
  const Range latency = Range::Closed(0, 1);
  RooflineParams p;
  // cuBLAS/CUTLASS bf16 GEMMs at large M sustain ~70% of the datasheet dense
  // peak on Hopper (clocks drop under the power limit at full tensor load).
  p.gemm_compute_efficiency =
      cfg.Number("gemm_compute_efficiency", p.gemm_compute_efficiency, eff);
  // Weight-streaming skinny GEMMs (decode) reach ~80% of HBM peak; a plain
  // device copy reaches ~90%.
  p.gemm_memory_efficiency =
      cfg.Number("gemm_memory_efficiency", p.gemm_memory_efficiency, eff);
  // FlashAttention-2/3 forward reaches ~40-75% of peak depending on head
  // size and sequence length; 0.5 is the middle for serving shapes.
  p.attention_compute_efficiency = cfg.Number(
      "attention_compute_efficiency", p.attention_compute_efficiency, eff);
  // Paged KV is read in small blocks (16 tokens) scattered in memory, which
  // costs bandwidth relative to one contiguous stream.
  p.attention_memory_efficiency = cfg.Number(
      "attention_memory_efficiency", p.attention_memory_efficiency, eff);
  // Norms, rotary, SiLU-mul and residual adds are short kernels whose ramp
  // and tail keep them below streaming bandwidth.
  p.elementwise_memory_efficiency = cfg.Number(
      "elementwise_memory_efficiency", p.elementwise_memory_efficiency, eff);
  // NCCL ring all-reduce bus bandwidth is ~70-80% of the NVLink link rate.
  p.interconnect_efficiency =
      cfg.Number("interconnect_efficiency", p.interconnect_efficiency, eff);
  // A small-message all-reduce (NCCL or vLLM's custom one) takes ~5-15 us.
  p.allreduce_latency_s = cfg.Number(
      "allreduce_latency_s", p.allreduce_latency_s, latency);
  // Scheduling, input preparation, sampling and graph launch in vLLM cost
  // ~0.2-0.5 ms per iteration on the host.
  p.step_overhead_s =
      cfg.Number("step_overhead_s", p.step_overhead_s, latency);
  if (const std::string why = TensorParallelProblem(model, tp); !why.empty()) {
    cfg.FailMessage("", why);
  }
  return std::make_unique<RooflineCostModel>(model, gpu, tp, p);
}

double RooflineCostModel::Gemm(double flops, double bytes) const {
  return std::max(flops / (gpu_.bf16_flops * p_.gemm_compute_efficiency),
                  bytes / (gpu_.hbm_bytes_per_s * p_.gemm_memory_efficiency));
}

// QKV, O, (router,) gate+up and down projections of one layer for T tokens.
// Bytes are weights read once plus activations in and out.
double RooflineCostModel::LayerGemmTime(double t) const {
  const double h = m_.hidden_size, d = m_.head_dim, b = m_.dtype_bytes;
  const double qkv = (q_heads_ + 2 * kv_heads_) * d;
  const double q = q_heads_ * d;
  double time = Gemm(2 * t * h * qkv, b * (h * qkv + t * h + t * qkv)) +
                Gemm(2 * t * q * h, b * (q * h + t * q + t * h));
  // A dense MLP is the one-expert case: every token, all weights.
  double routed = t, active = 1;
  if (m_.is_moe()) {
    const double e = m_.num_experts;
    time += Gemm(2 * t * h * e, b * (h * e + t * h + t * e));
    routed = t * m_.experts_per_token;
    active = ExpectedActiveExperts(m_.num_experts, m_.experts_per_token, t);
  }
  const double i = inter_;
  time += Gemm(2 * routed * h * 2 * i,
               b * (active * h * 2 * i + routed * h + routed * 2 * i));
  time +=
      Gemm(2 * routed * i * h, b * (active * i * h + routed * i + routed * h));
  return time;
}

double RooflineCostModel::LmHeadTime(double s) const {
  if (s == 0) return 0;
  const double h = m_.hidden_size, v = vocab_, b = m_.dtype_bytes;
  return Gemm(2 * s * h * v, b * (v * h + s * h + s * v));
}

double RooflineCostModel::AllReduceTime(double t) const {
  if (tp_ == 1) return 0;
  // Ring all-reduce: each GPU sends and receives 2(tp-1)/tp of the buffer.
  const double buffer = t * m_.hidden_size * m_.dtype_bytes;
  return p_.allreduce_latency_s +
         2.0 * (tp_ - 1) / tp_ * buffer /
             (gpu_.interconnect_bytes_per_s * p_.interconnect_efficiency);
}

// Bytes of activations moved by the memory-bound rest of the model.
double RooflineCostModel::ElementwiseTime(double t) const {
  const double h = m_.hidden_size, d = m_.head_dim, b = m_.dtype_bytes;
  const double k = m_.experts_per_token;
  const double per_layer = 2 * (2 * h)                       // RMSNorm r+w
                           + 2 * (3 * h)                     // residual adds
                           + 2 * (q_heads_ + kv_heads_) * d  // rotary on q, k
                           + 3 * inter_ * k;                 // SiLU(gate)*up
  const double once = 2 * h + 2 * h;  // embedding gather, final RMSNorm
  const double bytes = b * t * (m_.num_layers * per_layer + once);
  return bytes / (gpu_.hbm_bytes_per_s * p_.elementwise_memory_efficiency);
}

StepCost RooflineCostModel::StepTime(const BatchShape& batch) const {
  const double d = m_.head_dim, b = m_.dtype_bytes;
  double tokens = 0, sampling = 0;
  // Per-layer attention totals; prefill and decode are one kernel each.
  double pre_flops = 0, pre_bytes = 0, dec_flops = 0, dec_bytes = 0;
  for (const SeqWork& s : batch.seqs) {
    CheckSeq(s);
    if (s.new_tokens == 0) continue;
    const double n = s.new_tokens, c = s.context_tokens;
    tokens += n;
    if (s.samples) sampling += 1;
    if (IsDecode(s)) {
      dec_flops += 4 * q_heads_ * d * (c + 1);
      dec_bytes += b * (2 * kv_heads_ * d * (c + 1) + 2 * q_heads_ * d);
    } else {
      // Causal: new token j (1..n) attends to c + j keys.
      pre_flops += 4 * q_heads_ * d * n * (c + (n + 1) / 2);
      pre_bytes += b * (2 * kv_heads_ * d * (c + n) + 2 * q_heads_ * d * n);
    }
  }
  StepCost cost;
  if (tokens == 0) return cost;
  const double layers = m_.num_layers;
  const double attn_flops = gpu_.bf16_flops * p_.attention_compute_efficiency;
  const double attn_bw = gpu_.hbm_bytes_per_s * p_.attention_memory_efficiency;
  cost.gemm_s = layers * LayerGemmTime(tokens) + LmHeadTime(sampling);
  cost.attn_prefill_s =
      layers * std::max(pre_flops / attn_flops, pre_bytes / attn_bw);
  cost.attn_decode_s =
      layers * std::max(dec_flops / attn_flops, dec_bytes / attn_bw);
  cost.comm_s = layers * 2 * AllReduceTime(tokens);  // after attention, MLP
  cost.other_s = ElementwiseTime(tokens);
  cost.overhead_s = p_.step_overhead_s;
  return cost;
}

std::string RooflineCostModel::Describe() const {
  std::ostringstream os;
  os << "roofline (" << m_.name << " on " << gpu_.name << ", tp=" << tp_
     << "; gemm eff " << p_.gemm_compute_efficiency << " compute / "
     << p_.gemm_memory_efficiency << " memory; attention "
     << p_.attention_compute_efficiency << " / "
     << p_.attention_memory_efficiency << "; elementwise "
     << p_.elementwise_memory_efficiency << "; interconnect "
     << p_.interconnect_efficiency << ", all-reduce latency "
     << p_.allreduce_latency_s * 1e6 << " us; step overhead "
     << p_.step_overhead_s * 1e6 << " us)";
  return os.str();
}

}  // namespace servesim
