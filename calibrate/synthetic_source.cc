// Synthetic timings (see synthetic_source.h). Efficiencies per op family
// mirror RooflineCostModel: GEMMs use the GEMM pair, attention the attention
// pair, elementwise the elementwise bandwidth.
#include "calibrate/synthetic_source.h"

#include <algorithm>
#include <cmath>

#include "calibrate/fit.h"
#include "sim/core/rng.h"

namespace servesim::calibrate {
namespace {

// A clean time with log-normal noise, and the spread of repeated runs
// that noise implies: z(0.9) = 1.2816 sigma either side of the median.
StepTiming Noisy(double clean, const SyntheticOptions& o, Rng* rng) {
  StepTiming t;
  t.median_s = clean * std::exp(o.noise_sigma * rng->StandardNormal());
  t.p10_s = t.median_s * std::exp(-1.2816 * o.noise_sigma);
  t.p90_s = t.median_s * std::exp(1.2816 * o.noise_sigma);
  t.repetitions = o.repetitions;
  return t;
}

}  // namespace

double RooflineOpTime(const ModelSpec& model, const GpuSpec& gpu, int tp,
                      const OpPoint& p, const RooflineParams& r) {
  const ProfileOp op = ToProfileOp(p.kind);
  const OpFeatures f = FeaturesOf(op, ToShape(p), model, tp);
  double ce, me;
  if (IsGemm(op)) {
    ce = r.gemm.compute_efficiency, me = r.gemm.memory_efficiency;
  } else if (op == ProfileOp::kElementwise) {
    ce = 1, me = r.elementwise.rmsnorm_memory_efficiency;
  } else if (op == ProfileOp::kDecodeAttention) {
    ce = r.decode_attention.compute_efficiency;
    me = r.decode_attention.memory_efficiency;
  } else {
    ce = r.prefill_attention.compute_efficiency;
    me = r.prefill_attention.memory_efficiency;
  }
  return std::max(f.flops / (gpu.bf16_flops * ce),
                  f.bytes / (gpu.hbm_bytes_per_s * me));
}

std::vector<OpTiming> SyntheticTimings(const ModelSpec& model,
                                       const GpuSpec& gpu, int tp,
                                       const std::vector<OpPoint>& points,
                                       const SyntheticOptions& o) {
  Rng rng(o.seed, "calibrate-dry-run");
  std::vector<OpTiming> out;
  out.reserve(points.size());
  for (const OpPoint& p : points) {
    // The elementwise op is four kernels (two norms, rotary, SiLU-mul).
    const double launches = p.kind == OpKind::kElementwise ? 4 : 1;
    const double clean =
        launches * o.launch_s + RooflineOpTime(model, gpu, tp, p, o.roofline);
    const StepTiming n = Noisy(clean, o, &rng);
    out.push_back({p, n.median_s, n.p10_s, n.p90_s, n.repetitions});
  }
  return out;
}

std::vector<StepTiming> SyntheticStepTimings(const ModelSpec& model,
                                             const GpuSpec& gpu, int tp,
                                             const std::vector<BatchShape>& steps,
                                             const SyntheticOptions& o) {
  Rng rng(o.seed, "calibrate-dry-run-steps");
  const RooflineCostModel roofline(model, gpu, tp, o.roofline);
  // Per layer: 2 norms, 4 GEMMs, rotary, SiLU-mul, one or two attentions.
  const double kernels = 9.0 * model.num_layers + 2;
  std::vector<StepTiming> out;
  out.reserve(steps.size());
  for (const BatchShape& b : steps) {
    const double clean = roofline.StepTime(b).Kernels() + kernels * o.launch_s;
    out.push_back(Noisy(clean, o, &rng));
  }
  return out;
}

DeviceInfo SyntheticDevice(const GpuSpec& gpu) {
  DeviceInfo d;
  d.name = kDryRunDeviceName;
  d.driver = "none";
  d.memory_bytes = gpu.memory_bytes;
  return d;
}

}  // namespace servesim::calibrate
