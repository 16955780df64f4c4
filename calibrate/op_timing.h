// The seam between the GPU timing harness (CUDA, calibrate/gpu/) and the
// CPU-side grid, fitting and profile code (calibrate/*.cc, Eigen): one
// timed point of one operation of a transformer step at a tensor-parallel
// shard, and the description of the device it was timed on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::calibrate {

enum class OpKind {
  kGemmQkv,         // [M x hidden] x [hidden x (heads + 2 kv_heads) d / tp]
  kGemmO,           // [M x heads d / tp] x [heads d / tp x hidden]
  kGemmGateUp,      // [M x hidden] x [hidden x 2 inter / tp]
  kGemmDown,        // [M x inter / tp] x [inter / tp x hidden]
  kGemmLmHead,      // [M x hidden] x [hidden x vocab / tp]
  kDecodeAttention, // batch x context (paged, GQA)
  kPrefillAttention,// chunk x cached context (causal, GQA)
  kElementwise,     // RMSNorm + rotary + SiLU-mul + residual for M tokens
};

const char* OpKindName(OpKind kind);

// One grid point. Meaning of the shape fields by kind:
//  GEMMs and elementwise: tokens = M.
//  decode attention: batch = sequences, context = tokens cached per sequence.
//  prefill attention: tokens = chunk length, context = cached tokens before it.
struct OpPoint {
  OpKind kind = OpKind::kGemmQkv;
  int64_t tokens = 0;
  int64_t batch = 0;
  int64_t context = 0;
};

struct OpTiming {
  OpPoint point;
  double median_s = 0, p10_s = 0, p90_s = 0;
  int repetitions = 0;
};

// One executed step (a whole forward pass of the layer stack for one batch
// composition), timed like an op: median and p10/p90 of repetitions.
struct StepTiming {
  double median_s = 0, p10_s = 0, p90_s = 0;
  int repetitions = 0;
};

struct DeviceInfo {
  std::string name;          // e.g. "NVIDIA H200"
  std::string driver;        // driver version string
  int sm_count = 0;
  double memory_bytes = 0;
  double sm_clock_mhz = 0, mem_clock_mhz = 0;
  // Measured ceilings (0 when not measured, e.g. dry run).
  double copy_bytes_per_s = 0;   // device-to-device copy bandwidth
  double gemm_bf16_flops = 0;    // cuBLAS bf16 GEMM rate, large square
};

}  // namespace servesim::calibrate
