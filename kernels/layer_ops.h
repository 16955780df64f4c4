// Launchers of the dense pieces of a transformer layer: the cuBLAS GEMM
// (gemm.cu) and the memory-bound rest (layer_ops.cu: residual add + RMSNorm,
// rotary + KV-cache write, SiLU-and-multiply), plus a device-side random
// fill for timing inputs (never time on zeros). Layouts: kernels/reference.h.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/bf16_host.h"
#include "sim/core/status.h"

namespace servesim::kernels {

// c[m][n] = sum_k a[m][k] w[n][k]: bf16 operands, fp32 accumulation, bf16 out.
// FLOPs 2mnk; bytes 2(mk + nk + mn). The handle's stream is set to `stream`.
Status LaunchGemmBf16(cublasHandle_t handle, const Bf16* a, const Bf16* w,
                      Bf16* c, int m, int n, int k, cudaStream_t stream);

// h = x + residual; residual <- h (if residual is non-null, else h = x);
// out = h * rsqrt(mean(h^2) + eps) * weight. hidden % 8 == 0.
// Bytes: 2 * tokens * hidden * (2 reads + 2 writes) + weight.
Status LaunchAddRmsNorm(const Bf16* x, Bf16* residual, const Bf16* weight,
                        int tokens, int hidden, float eps, Bf16* out,
                        cudaStream_t stream);

// Splits a QKV GEMM output row [q heads | k heads | v heads] of token t:
// applies rotate-half rotary at positions[t] to q (written to q_out
// [T][heads][D]) and k, and writes k and v into the paged cache at
// slot_mapping[t] (= block * block_size + offset; negative = skip).
// Bytes: 2 * T * (heads + 2 kv_heads) * D read, the same written.
Status LaunchRotaryKvWrite(const Bf16* qkv, const int32_t* positions,
                           const int32_t* slot_mapping, int tokens, int heads,
                           int kv_heads, int head_dim, float theta, Bf16* q_out,
                           Bf16* k_cache, Bf16* v_cache, cudaStream_t stream);

// out[t][i] = silu(gu[t][i]) * gu[t][inter + i]; inter % 8 == 0.
// Bytes: 2 * tokens * inter * 3.
Status LaunchSiluMul(const Bf16* gate_up, int tokens, int inter, Bf16* out,
                     cudaStream_t stream);

// Fills n bf16 values with a hash of (seed, index) mapped to [-scale, scale).
Status LaunchFillRandomBf16(Bf16* data, int64_t n, uint64_t seed, float scale,
                            cudaStream_t stream);

}  // namespace servesim::kernels
