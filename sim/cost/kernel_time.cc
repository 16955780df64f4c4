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

double SymmMemAllReduceMaxBytes(const GpuSpec& gpu, int gpus) {
  if (gpu.interconnect_topology != "nvswitch") return 0;
  constexpr double kMiB = 1024.0 * 1024.0;
  auto pick = [gpus](double g2, double g4, double g6, double g8) {
    switch (gpus) {
      case 2: return g2;
      case 4: return g4;
      case 6: return g6;
      case 8: return g8;
      default: return 0.0;
    }
  };
  if (gpu.compute_capability == "9.0") return pick(64, 32, 64, 64) * kMiB;
  if (gpu.compute_capability == "10.0") return pick(8, 32, 128, 128) * kMiB;
  return 0;
}

double OwnAllReduceMaxBytes(const AllReduceParams& p, const GpuSpec& gpu, int gpus) {
  if (!CustomAllReduceRuns(gpu, gpus)) return 0;
  const double symm = p.symm_mem ? SymmMemAllReduceMaxBytes(gpu, gpus) : 0;
  return std::max(p.custom_max_bytes, symm);
}

double AllReduceTime(const AllReduceParams& p, const GpuSpec& gpu, int gpus,
                     double bytes) {
  if (gpus <= 1 || bytes <= 0) return 0;
  const double bus = 2.0 * (gpus - 1) / gpus * bytes;
  const double link = AllReduceLinkBytesPerS(gpu, gpus);
  const double own = OwnAllReduceMaxBytes(p, gpu, gpus);
  if (bytes < std::min(own, p.custom_max_bytes)) {
    return p.custom_latency_s + bus / (link * p.custom_efficiency);
  }
  if (bytes < own) return p.symm_latency_s + bytes / (link * p.symm_efficiency);
  return p.nccl_latency_s + bus / (link * p.nccl_efficiency);
}

}  // namespace servesim
