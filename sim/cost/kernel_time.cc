// Kernel and all-reduce time formulas (see kernel_time.h).
#include "sim/cost/kernel_time.h"

#include <algorithm>
#include <cmath>

namespace servesim {

double SmoothMaxPow(double hi, double lo, double p) {
  return hi * std::pow(1 + std::pow(lo, p), 1 / p);
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
