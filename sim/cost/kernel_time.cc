// Kernel and all-reduce time formulas (see kernel_time.h).
#include "sim/cost/kernel_time.h"

#include <algorithm>
#include <cmath>

namespace servesim {

double SmoothMax(double a, double b, double p) {
  if (p <= 0) return std::max(a, b);
  const double hi = std::max(a, b);
  if (hi <= 0) return 0;
  // Scaled by the larger term so a large p cannot overflow.
  const double lo = std::min(a, b) / hi;
  // p = 1 (terms added; the fitted attention kernels) without pow: pow(x, 1)
  // is exactly x, so this is the same bits, at a fraction of the cost (two
  // pow calls per step were ~8% of a chat run).
  if (p == 1) return hi * (1 + lo);
  return hi * std::pow(1 + std::pow(lo, p), 1 / p);
}

double KernelTime(const KernelRates& r, const GpuSpec& gpu, double flops,
                  double bytes, double items) {
  const double c = flops / (gpu.GemmPeakFlops(r.fp8_compute) * r.compute_efficiency);
  const double m = bytes / (gpu.hbm_bytes_per_s * r.memory_efficiency);
  return r.floor_s + r.per_item_s * items + SmoothMax(c, m, r.crossover_p);
}

double AllReduceLinkBytesPerS(const GpuSpec& gpu, int gpus) {
  const std::string& t = gpu.interconnect_topology;
  if (t == "pcie") {
    return std::min(gpu.interconnect_bytes_per_s, gpu.pcie_bytes_per_s);
  }
  if (t == "nvlink_pairs" && gpus > 2) return gpu.pcie_bytes_per_s;
  return gpu.interconnect_bytes_per_s;
}

bool CustomAllReduceRuns(const GpuSpec& gpu, int gpus) {
  return gpu.interconnect_topology == "nvswitch" || gpus <= 2;
}

double AllReduceTime(const AllReduceParams& p, const GpuSpec& gpu, int gpus,
                     double bytes) {
  if (gpus <= 1 || bytes <= 0) return 0;
  const double bus = 2.0 * (gpus - 1) / gpus * bytes;
  const double link = AllReduceLinkBytesPerS(gpu, gpus);
  if (CustomAllReduceRuns(gpu, gpus) && bytes < p.custom_max_bytes) {
    return p.custom_latency_s + bus / (link * p.custom_efficiency);
  }
  return p.nccl_latency_s + bus / (link * p.nccl_efficiency);
}

}  // namespace servesim
