// The time of one GPU kernel as the roofline prices it, shared by
// RooflineCostModel and the offline fit of its constants
// (calibrate/roofline_fit.cc), so the fitted numbers mean exactly what the
// model does with them.
//
//   time = floor + per_item * items + (C^p + M^p)^(1/p)
//   C = FLOPs / (peak bf16 or fp8 * compute_efficiency)
//   M = bytes / (HBM bandwidth * memory_efficiency)
//
// The floor is what a graph-replayed launch of the kernel costs however
// little it does (grid launch, prologue, epilogue, one DRAM round trip).
// The p-norm is a smooth crossover between the compute and memory bounds:
// at p = infinity it is max(C, M) (the sharp roofline); measured GEMMs near
// the ridge point are slower than max(C, M), which a finite p captures
// (at C = M the time is 2^(1/p) * C). `items` counts work units that
// neither term sees (attention: query rows x heads, each paying a tile's
// softmax and rescale; a decode sequence's split-K reduction).
#pragma once

#include <algorithm>
#include <string>

#include "sim/model/model_spec.h"

namespace servesim {

struct KernelRates {
  double floor_s = 0;
  double compute_efficiency = 1;  // of GpuSpec::bf16_flops
  double memory_efficiency = 1;   // of GpuSpec::hbm_bytes_per_s
  double crossover_p = 0;         // p-norm exponent; 0 means max (p = inf)
  double per_item_s = 0;
  // The compute term runs at the GPU's fp8 tensor rate (fp8 GEMMs, and
  // FlashAttention-3 on an fp8 KV cache, which quantizes q and runs QK^T
  // and PV in fp8); the bf16 rate otherwise or without fp8 tensor cores.
  bool fp8_compute = false;
};

// (a^p + b^p)^(1/p) for hi = max(a, b) > 0, lo = min(a, b) / hi, p not
// 0 or 1 (the general case of SmoothMax, with its two pow calls).
double SmoothMaxPow(double hi, double lo, double p);

// (a^p + b^p)^(1/p) for a, b >= 0; max(a, b) when p <= 0. Inline, as is
// KernelTime: the roofline prices every step with two or three of them.
inline double SmoothMax(double a, double b, double p) {
  if (p <= 0) return std::max(a, b);
  const double hi = std::max(a, b);
  if (hi <= 0) return 0;
  // Scaled by the larger term so a large p cannot overflow.
  const double lo = std::min(a, b) / hi;
  // p = 1 (terms added; the fitted attention kernels) without pow: pow(x, 1)
  // is exactly x, so this is the same bits, at a fraction of the cost (two
  // pow calls per step were ~8% of a chat run).
  if (p == 1) return hi * (1 + lo);
  return SmoothMaxPow(hi, lo, p);
}

inline double KernelTime(const KernelRates& r, const GpuSpec& gpu, double flops,
                         double bytes, double items = 0) {
  const double c = flops / (gpu.GemmPeakFlops(r.fp8_compute) * r.compute_efficiency);
  const double m = bytes / (gpu.hbm_bytes_per_s * r.memory_efficiency);
  return r.floor_s + r.per_item_s * items + SmoothMax(c, m, r.crossover_p);
}

// A tensor-parallel all-reduce as vLLM runs it: its custom all-reduce
// (one CUDA-graph-captured kernel reading peers' buffers over NVLink) for
// messages under custom_max_bytes when the topology allows it, NCCL's ring
// otherwise; both cost latency + 2(n-1)/n * bytes / (link * efficiency),
// the bus traffic of a ring all-reduce. On Hopper and Blackwell NVSwitch
// boards vLLM (0.11 on, VLLM_ALLREDUCE_USE_SYMM_MEM=1 by default) keeps
// messages from custom_max_bytes up to SymmMemAllReduceMaxBytes off NCCL:
// torch symmetric memory's multimem all-reduce at 6 and 8 GPUs, its
// custom all-reduce (whose limit symmetric memory raises) at 2 and 4. That
// range costs symm_latency_s + bytes / (link * symm_efficiency): measured,
// it barely grows with the GPU count (16 MiB on H100: 81, 99 and 92 us at
// 2, 4 and 8 GPUs), where NCCL's ring does.
struct AllReduceParams {
  double custom_latency_s = 0;
  double custom_efficiency = 1;
  double custom_max_bytes = 8.0 * 1024 * 1024;  // vLLM's default max_size
  double nccl_latency_s = 0;
  double nccl_efficiency = 1;
  double symm_latency_s = 0;
  double symm_efficiency = 1;
  // False: NCCL from custom_max_bytes on (VLLM_ALLREDUCE_USE_SYMM_MEM=0;
  // SGLang, whose symmetric-memory all-reduce is opt-in).
  bool symm_mem = true;
};

// The message size from which vLLM hands a `gpus`-GPU all-reduce to NCCL
// when symmetric memory is on, or 0 where it does not change vLLM's
// choice (not an NVSwitch board, or a compute capability vLLM has no
// limits for). vLLM's SYMM_MEM_ALL_REDUCE_MAX_SIZES and, at 2 and 4 GPUs,
// CUSTOM_ALL_REDUCE_MAX_SIZES (vllm/distributed/device_communicators/
// all_reduce_utils.py): 9.0: 64, 32, 64, 64 MiB at 2, 4, 6, 8 GPUs; 10.0:
// 8, 32, 128, 128 MiB.
double SymmMemAllReduceMaxBytes(const GpuSpec& gpu, int gpus);

// One direction's bandwidth an all-reduce over `gpus` GPUs gets from the
// GPU's topology: the NVLink rate on "nvswitch" and on "nvlink_pairs" at
// 2 GPUs; PCIe between pairs and on "pcie" (the smaller of the two links).
double AllReduceLinkBytesPerS(const GpuSpec& gpu, int gpus);
// vLLM enables its custom all-reduce when all GPUs are joined by NVLink
// (NVSwitch, or one NVLink pair) or there are only two
// (vllm/distributed/device_communicators/custom_all_reduce.py: "not
// supported on more than two PCIe-only GPUs").
bool CustomAllReduceRuns(const GpuSpec& gpu, int gpus);
// The size below which vLLM's own all-reduce (custom, or symmetric memory
// when p.symm_mem) runs, NCCL at or above; 0 where the custom all-reduce
// does not run.
double OwnAllReduceMaxBytes(const AllReduceParams& p, const GpuSpec& gpu, int gpus);
double AllReduceTime(const AllReduceParams& p, const GpuSpec& gpu, int gpus,
                     double bytes);

}  // namespace servesim
