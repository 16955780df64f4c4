// Achieved fractions of the measured ceilings (see kernel_speed.h).
#include "calibrate/kernel_speed.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "calibrate/fit.h"
#include "sim/cost/op_features.h"

namespace servesim::calibrate {
namespace {

std::string ShapeText(const OpPoint& p) {
  char buf[96];
  if (p.kind == OpKind::kDecodeAttention) {
    std::snprintf(buf, sizeof buf, "batch %lld x context %lld",
                  static_cast<long long>(p.batch), static_cast<long long>(p.context));
  } else {
    std::snprintf(buf, sizeof buf, "%lld tokens after %lld cached",
                  static_cast<long long>(p.tokens), static_cast<long long>(p.context));
  }
  return buf;
}

}  // namespace

std::vector<OpPoint> KernelSpeedPoints() {
  using K = OpKind;
  return {
      {K::kDecodeAttention, 0, 64, 4096},  // goal: >= 80% of copy bandwidth
      {K::kDecodeAttention, 0, 64, 1024},
      {K::kDecodeAttention, 0, 64, 16384},
      {K::kDecodeAttention, 0, 256, 4096},
      {K::kDecodeAttention, 0, 8, 4096},
      {K::kPrefillAttention, 8192, 0, 0},  // goal: >= 40% of GEMM rate
      {K::kPrefillAttention, 2048, 0, 0},
      {K::kPrefillAttention, 2048, 0, 8192},
      {K::kPrefillAttention, 512, 0, 0},
  };
}

std::vector<KernelSpeedRow> KernelSpeed(const ModelSpec& model, int tp,
                                        const DeviceInfo& device,
                                        const std::vector<OpTiming>& timings) {
  std::vector<KernelSpeedRow> rows;
  for (const OpTiming& t : timings) {
    const OpKind k = t.point.kind;
    if (k != OpKind::kDecodeAttention && k != OpKind::kPrefillAttention) {
      throw std::invalid_argument(std::string("kernel speed: ") + OpKindName(k) +
                                  " is not an attention kernel");
    }
    if (!(t.median_s > 0) || !std::isfinite(t.median_s)) {
      throw std::invalid_argument("kernel speed: " + ShapeText(t.point) +
                                  " has no positive time");
    }
    const OpFeatures f = FeaturesOf(ToProfileOp(k), ToShape(t.point), model, tp);
    KernelSpeedRow r;
    r.point = t.point;
    r.flops = f.flops;
    r.bytes = f.bytes;
    r.median_s = t.median_s;
    r.achieved_flops = f.flops / t.median_s;
    r.achieved_bytes_per_s = f.bytes / t.median_s;
    // Below the ridge point of the measured ceilings a kernel is bounded by
    // memory, above it by the tensor cores (decode, without ceilings).
    const bool have = device.copy_bytes_per_s > 0 && device.gemm_bf16_flops > 0;
    r.memory_bound = have ? f.flops / f.bytes < device.gemm_bf16_flops / device.copy_bytes_per_s
                          : k == OpKind::kDecodeAttention;
    const double ceiling = r.memory_bound ? device.copy_bytes_per_s : device.gemm_bf16_flops;
    const double achieved = r.memory_bound ? r.achieved_bytes_per_s : r.achieved_flops;
    r.fraction = ceiling > 0 ? achieved / ceiling : 0;
    if (k == OpKind::kDecodeAttention && t.point.batch == 64 && t.point.context == 4096)
      r.goal = 0.8;
    if (k == OpKind::kPrefillAttention && t.point.tokens == 8192 && t.point.context == 0)
      r.goal = 0.4;
    rows.push_back(r);
  }
  return rows;
}

std::string KernelSpeedTable(const std::vector<KernelSpeedRow>& rows,
                             const KernelSpeedContext& c) {
  char line[320];
  std::snprintf(line, sizeof line,
                "  %s tp=%d on %s (driver %s)%s; ceilings (%s): copy %.0f GB/s "
                "(read+write), cuBLAS bf16 GEMM %.0f TFLOP/s; median times\n",
                c.model.c_str(), c.tp, c.device.c_str(), c.driver.c_str(),
                c.synthetic ? " [SYNTHETIC: not a measurement]" : "",
                c.ceilings_source.c_str(), c.copy_bytes_per_s / 1e9,
                c.gemm_bf16_flops / 1e12);
  std::string out = line;
  std::snprintf(line, sizeof line, "  %-18s %-30s %9s %9s %10s %11s %9s %s\n", "kernel",
                "shape", "GFLOP", "MB", "time us", "achieved", "of ceil", "goal");
  out += line;
  for (const KernelSpeedRow& r : rows) {
    char achieved[32], goal[48] = "";
    if (r.memory_bound) {
      std::snprintf(achieved, sizeof achieved, "%.0f GB/s", r.achieved_bytes_per_s / 1e9);
    } else {
      std::snprintf(achieved, sizeof achieved, "%.0f TF/s", r.achieved_flops / 1e12);
    }
    if (r.goal > 0) {
      std::snprintf(goal, sizeof goal, ">= %.0f%% of %s: %s", 100 * r.goal,
                    r.memory_bound ? "copy" : "GEMM",
                    r.fraction <= 0 ? "no ceiling" : r.fraction >= r.goal ? "met" : "SHORT");
    }
    std::snprintf(line, sizeof line, "  %-18s %-30s %9.2f %9.1f %10.1f %11s %8.1f%% %s\n",
                  OpKindName(r.point.kind), ShapeText(r.point).c_str(), r.flops / 1e9,
                  r.bytes / 1e6, r.median_s * 1e6, achieved, 100 * r.fraction, goal);
    out += line;
  }
  return out;
}

nlohmann::json KernelSpeedJson(const std::vector<KernelSpeedRow>& rows,
                               const KernelSpeedContext& c) {
  nlohmann::json out = nlohmann::json::array();
  for (const KernelSpeedRow& r : rows) {
    nlohmann::json j = {{"kernel", OpKindName(r.point.kind)},
                        {"shape", ShapeText(r.point)},
                        {"flops", r.flops},
                        {"bytes", r.bytes},
                        {"median_s", r.median_s},
                        {"achieved_flops_per_s", r.achieved_flops},
                        {"achieved_bytes_per_s", r.achieved_bytes_per_s},
                        {"compared_with", r.memory_bound ? "copy bandwidth" : "bf16 GEMM rate"},
                        {"fraction_of_ceiling", r.fraction}};
    if (r.goal > 0) j["goal_fraction"] = r.goal;
    out.push_back(j);
  }
  return {{"model", c.model},
          {"tp", c.tp},
          {"device", c.device},
          {"driver", c.driver},
          {"synthetic", c.synthetic},
          {"ceilings_source", c.ceilings_source},
          {"copy_bytes_per_s", c.copy_bytes_per_s},
          {"gemm_bf16_flops", c.gemm_bf16_flops},
          {"counting", "bytes and FLOPs per sim/cost/op_features.cc: decode = KV "
                       "read + q in + out; prefill = causal QK^T and PV FLOPs"},
          {"kernels", out}};
}

}  // namespace servesim::calibrate
