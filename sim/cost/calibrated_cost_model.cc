// CalibratedCostModel (see calibrated_cost_model.h).
//
// Decode attention is priced as one kernel over the whole decoding batch
// (batch size and summed KV bytes, i.e. the mean context), not per
// sequence: vLLM launches one paged-attention kernel per layer for all
// decoding sequences, so the launch constant is paid once, and the fitted
// features are sums over sequences, so the batch total is exact for the
// sum and max forms. Prefill attention is priced per prefilling sequence,
// because its work (chunk x (cached + chunk/2)) is not a function of batch
// totals; with several prefills in one step this counts the launch
// constant once per sequence, a slight over-estimate.
#include "sim/cost/calibrated_cost_model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "sim/core/check.h"
#include "sim/core/paths.h"
#include "sim/cost/roofline_cost_model.h"
#include "sim/model/model_loader.h"

namespace servesim {
namespace {

// Roofline time of an op's work on a GPU's datasheet ceilings. Projection
// compares datasheet with datasheet: the target was never measured, and
// assuming it reaches the same fraction of its datasheet as the measured
// GPU did makes measured ceilings cancel out of the ratio anyway.
double RooflineTime(const OpFeatures& f, const GpuSpec& g) {
  return std::max(f.flops / g.bf16_flops, f.bytes / g.hbm_bytes_per_s);
}

std::string Percent(double pct) {
  std::ostringstream os;
  os.precision(pct < 10 ? 2 : 3);
  os << pct << "%";
  return os.str();
}

}  // namespace

CalibratedCostModel::CalibratedCostModel(CalibrationProfile profile,
                                         std::string profile_path,
                                         const ModelSpec& model,
                                         const GpuSpec& measured,
                                         const GpuSpec& target, int tp, HostTiming host)
    : profile_(std::move(profile)),
      profile_path_(std::move(profile_path)),
      m_(model),
      measured_(measured),
      target_(target),
      tp_(tp),
      projected_(measured.name != target.name),
      host_(host) {
  if (profile_.model != model.name || profile_.tp != tp ||
      profile_.ops.size() != kNumProfileOps) {
    std::fprintf(stderr,
                 "CalibratedCostModel: profile for %s tp=%d used for %s "
                 "tp=%d\n",
                 profile_.model.c_str(), profile_.tp, model.name.c_str(), tp);
    std::abort();
  }
}

std::unique_ptr<CostModel> CalibratedCostModel::FromConfig(
    const JsonView& cfg, const ModelSpec& model, const GpuSpec& gpu, int tp, HostWork host) {
  cfg.AllowKeys({"type", "profile", "host_gap_s"});
  HostTiming timing{.work = host};
  timing.gap_s = cfg.Number("host_gap_s", timing.gap_s, Range::Closed(0, 1));
  const std::string path = cfg.RequireString("profile");
  if (model.is_moe()) {
    cfg.FailMessage("type", model.name +
                                " is a mixture of experts; calibrated "
                                "profiles time dense layers only (use "
                                "roofline)");
  }
  if (model.is_mla() || model.has_sliding_window()) {
    cfg.FailMessage("type", model.name + (model.is_mla() ? " uses multi-head latent attention"
                                                          : " has sliding-window layers") +
                                "; calibrated profiles time GQA attention over the whole "
                                "context only (use roofline)");
  }
  CalibrationProfile p = LoadCalibrationProfile(ResolveDataPath(path));
  if (p.dtype != model.weight_dtype || p.kv_cache_dtype != model.kv_cache_dtype) {
    cfg.FailMessage("profile",
                    path + " holds kernel timings with " + p.dtype + " weights and a " +
                        p.kv_cache_dtype + " KV cache, but the scenario runs " +
                        model.Label() + "; use a profile of the same dtypes (imported "
                        "fp8 profiles end in -fp8.json) or cost_model.type=roofline");
  }
  if (p.model != model.name || p.tp != tp) {
    cfg.FailMessage("profile",
                    path + " was calibrated for " + p.model + " at tp=" +
                        std::to_string(p.tp) + ", but the scenario runs " +
                        model.name + " at tp=" + std::to_string(tp) +
                        "; calibrate it (servesim-calibrate run --model " +
                        model.name + " --tp " + std::to_string(tp) +
                        ") or use cost_model.type=roofline");
  }
  const GpuSpec measured = LoadGpuSpec(p.gpu);
  return std::make_unique<CalibratedCostModel>(std::move(p), path, model,
                                               measured, gpu, tp, timing);
}

CostModelError CalibratedCostModel::Error() const {
  const double e = profile_.WorstHeldoutMapePct() / 100;
  std::string source = "calibrated profile " + profile_path_ +
                       ": worst held-out kernel error of its measured ops "
                       "(elementwise kernels and host time not measured)";
  if (profile_.synthetic) source += " (SYNTHETIC profile: not a measurement)";
  if (projected_) {
    source += " (projected from " + measured_.name + " to " + target_.name +
              " by roofline ratios: larger)";
  }
  return {e, e, source};
}

double CalibratedCostModel::Op(ProfileOp op, const OpShape& shape) const {
  const OpFeatures f = FeaturesOf(op, shape, m_, tp_);
  double t = PredictOp(profile_.Fit(op), f);
  if (projected_ && t > 0) {
    t *= RooflineTime(f, target_) / RooflineTime(f, measured_);
  }
  return t;
}

// The profile's measured all-reduce when it has one (imported tables: vLLM's
// custom all-reduce, NCCL above its size limit), else the roofline's
// all-reduce (custom below 8 MiB, NCCL above) with its default constants
// (the GPU harness does not time communication: one GPU cannot time
// NVLink).
double CalibratedCostModel::AllReduceTime(double tokens) const {
  if (tp_ == 1) return 0;
  const double buffer = tokens * m_.hidden_size * m_.dtype_bytes;
  if (!profile_.allreduce.empty()) {
    const double t = EvalGrid(profile_.allreduce, 1, buffer);
    // Another GPU's interconnect, or a host link other than the datasheet's
    // (hardware.interconnect_gb_per_s): scale by the link ratio (1 when the
    // same).
    return t * measured_.interconnect_bytes_per_s /
           target_.interconnect_bytes_per_s;
  }
  return servesim::AllReduceTime(RooflineParams::Kernels().allreduce, target_,
                                 tp_, buffer);
}

StepCost CalibratedCostModel::StepTime(const BatchShape& batch) const {
  int64_t tokens = batch.decode_seqs, sampling = batch.decode_seqs;
  int64_t decode_seqs = batch.decode_seqs, decode_context = batch.decode_context;
  double prefill_attn = 0;
  SERVESIM_CHECK(batch.runs.empty(), "CalibratedCostModel: runs of sequences are not priced here");
  for (const SeqWork& s : batch.seqs) {
    if (s.new_tokens < 0 || s.context_tokens < 0) {
      std::fprintf(stderr, "CalibratedCostModel: bad SeqWork %d/%d\n",
                   s.new_tokens, s.context_tokens);
      std::abort();
    }
    if (s.new_tokens == 0) continue;
    tokens += s.new_tokens;
    if (s.samples) ++sampling;
    if (IsDecode(s)) {
      ++decode_seqs;
      decode_context += s.context_tokens;
    } else {
      prefill_attn +=
          Op(ProfileOp::kPrefillAttention, {s.new_tokens, 1, s.context_tokens});
    }
  }
  StepCost cost;
  if (tokens == 0) return cost;
  const double layers = m_.num_layers;
  const OpShape m{tokens, 0, 0};
  cost.gemm_s =
      layers * (Op(ProfileOp::kGemmQkv, m) + Op(ProfileOp::kGemmO, m) +
                Op(ProfileOp::kGemmGateUp, m) + Op(ProfileOp::kGemmDown, m)) +
      (m_.holds_lm_head ? Op(ProfileOp::kGemmLmHead, {sampling, 0, 0}) : 0);
  cost.attn_prefill_s = layers * prefill_attn;
  if (decode_seqs > 0) {
    // Mean context (rounded down); the features sum over sequences, so
    // batch x mean equals the per-sequence sum up to the rounding.
    const OpShape d{decode_seqs, decode_seqs, decode_context / decode_seqs};
    cost.attn_decode_s = layers * Op(ProfileOp::kDecodeAttention, d);
  }
  cost.comm_s = layers * 2 * AllReduceTime(static_cast<double>(tokens));
  cost.other_s = layers * Op(ProfileOp::kElementwise, m);
  cost.overhead_s = host_.Charged(profile_.step_overhead_s, cost.Total());
  return cost;
}

std::string CalibratedCostModel::Describe() const {
  std::ostringstream os;
  const std::string err = Percent(profile_.WorstHeldoutMapePct());
  os << "calibrated (profile " << profile_path_ << ", device "
     << profile_.device.name << (profile_.synthetic ? " [SYNTHETIC]" : "")
     << ", " << m_.name << " tp=" << tp_;
  // Another engine's kernels than vLLM's (the profiles without the key came
  // first and are vLLM's): the run's scheduler is still the engine's below.
  const std::string engine =
      profile_.import_info.is_object()
          ? profile_.import_info.value("engine_name", "")
          : std::string();
  if (!engine.empty() && engine != "vllm") {
    const std::string e = profile_.import_info.value("engine", engine);
    os << ", " << e.substr(0, e.find(';'));  // "SGLang 0.5.14 kernels"
  }
  os << ", held-out MAPE " << err << " worst op";
  for (const OpFit& f : profile_.ops) {
    if (!f.measured) os << "; " << ProfileOpName(f.op) << " not measured";
  }
  if (projected_) {
    os << "; PROJECTED from " << measured_.name << " to " << target_.name
       << " (±" << err << " from the fit error, plus the projection's own)";
  }
  if (const std::string overlap = host_.Described(); !overlap.empty()) {
    os << "; host " << profile_.step_overhead_s * 1e6 << " us a step, " << overlap;
  }
  os << ")";
  return os.str();
}

}  // namespace servesim
