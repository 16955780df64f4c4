// The memory-bound rest of a layer, one kernel per fused stage:
//  - AddRmsNorm: h = x + r; r <- h; y = h * rsqrt(mean(h^2) + eps) * w
//    (one block per token, 16-byte accesses, fp32 sum of squares).
//  - RotaryKvWrite: rotate-half rotary on q and k of the QKV GEMM output,
//    q to its own buffer, k and v straight into the paged cache (the write
//    the engine does before attention), angle = pos * theta^(-2i/D).
//  - SiluMul: y = silu(gate) * up, 8 elements per thread.
//  - FillRandomBf16: timing inputs from a hash (splitmix64) of the index.
// Each moves only its inputs and outputs once; compare bytes/s with the
// measured copy bandwidth. CPU references: layer_reference.cc.
#include <cuda_bf16.h>

#include <cmath>
#include <string>

#include "kernels/layer_ops.h"

namespace servesim::kernels {
namespace {

constexpr int kNormThreads = 256;

__device__ inline void Unpack8(const uint4& raw, float (&f)[8]) {
  const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    float2 v = __bfloat1622float2(p[e]);
    f[2 * e] = v.x;
    f[2 * e + 1] = v.y;
  }
}

__device__ inline uint4 Pack8(const float (&f)[8]) {
  uint4 raw;
  __nv_bfloat162* p = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
  for (int e = 0; e < 4; ++e) p[e] = __floats2bfloat162_rn(f[2 * e], f[2 * e + 1]);
  return raw;
}

__global__ void __launch_bounds__(kNormThreads)
    AddRmsNormKernel(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* residual,
                     const __nv_bfloat16* __restrict__ w, int hidden, float eps,
                     __nv_bfloat16* __restrict__ out) {
  __shared__ float warp_sums[kNormThreads / 32];
  const int64_t base = (int64_t)blockIdx.x * hidden;
  const int chunks = hidden / 8;
  float sumsq = 0.f;
  for (int c = threadIdx.x; c < chunks; c += kNormThreads) {
    float h[8], r[8];
    Unpack8(*reinterpret_cast<const uint4*>(x + base + c * 8), h);
    if (residual) {
      Unpack8(*reinterpret_cast<const uint4*>(residual + base + c * 8), r);
#pragma unroll
      for (int e = 0; e < 8; ++e) h[e] += r[e];
      *reinterpret_cast<uint4*>(residual + base + c * 8) = Pack8(h);
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) sumsq += h[e] * h[e];
  }
  for (int o = 16; o > 0; o >>= 1) sumsq += __shfl_xor_sync(0xffffffffu, sumsq, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sumsq;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int i = 0; i < kNormThreads / 32; ++i) total += warp_sums[i];
  const float inv = rsqrtf(total / hidden + eps);
  // Second pass re-reads h (this block just wrote it: L1/L2 hits). It uses the
  // unrounded fp32 h only through the norm; y is computed from bf16 h, like
  // an unfused residual-then-norm pair.
  const __nv_bfloat16* src = residual ? residual : x;
  for (int c = threadIdx.x; c < chunks; c += kNormThreads) {
    float h[8], g[8];
    Unpack8(*reinterpret_cast<const uint4*>(src + base + c * 8), h);
    Unpack8(*reinterpret_cast<const uint4*>(w + c * 8), g);
#pragma unroll
    for (int e = 0; e < 8; ++e) h[e] = h[e] * inv * g[e];
    *reinterpret_cast<uint4*>(out + base + c * 8) = Pack8(h);
  }
}

// One block per token; thread i handles rotation pairs (i, i + D/2) of heads.
__global__ void RotaryKvWriteKernel(const __nv_bfloat16* __restrict__ qkv,
                                    const int32_t* __restrict__ positions,
                                    const int32_t* __restrict__ slots, int heads,
                                    int kv_heads, int d, float log2_theta,
                                    __nv_bfloat16* __restrict__ q_out,
                                    __nv_bfloat16* __restrict__ k_cache,
                                    __nv_bfloat16* __restrict__ v_cache) {
  const int t = blockIdx.x, half = d / 2;
  const int64_t row = (int64_t)t * (heads + 2 * kv_heads) * d;
  const float pos = (float)positions[t];
  const int64_t slot = slots[t];
  for (int i = threadIdx.x; i < (heads + kv_heads) * half; i += blockDim.x) {
    const int h = i / half, p = i % half;
    float sn, cs;
    sincosf(pos * exp2f(-2.f * p / d * log2_theta), &sn, &cs);
    const __nv_bfloat16* src = qkv + row + (int64_t)h * d;
    float x1 = __bfloat162float(src[p]), x2 = __bfloat162float(src[p + half]);
    __nv_bfloat16 y1 = __float2bfloat16(x1 * cs - x2 * sn);
    __nv_bfloat16 y2 = __float2bfloat16(x2 * cs + x1 * sn);
    if (h < heads) {
      __nv_bfloat16* dst = q_out + ((int64_t)t * heads + h) * d;
      dst[p] = y1;
      dst[p + half] = y2;
    } else if (slot >= 0) {
      __nv_bfloat16* dst = k_cache + (slot * kv_heads + (h - heads)) * d;
      dst[p] = y1;
      dst[p + half] = y2;
    }
  }
  if (slot < 0) return;
  const __nv_bfloat16* vsrc = qkv + row + (int64_t)(heads + kv_heads) * d;
  for (int i = threadIdx.x; i < kv_heads * d; i += blockDim.x)
    v_cache[slot * kv_heads * d + i] = vsrc[i];
}

__global__ void SiluMulKernel(const __nv_bfloat16* __restrict__ gu, int64_t tokens,
                              int inter, __nv_bfloat16* __restrict__ out) {
  const int chunks = inter / 8;
  const int64_t n = tokens * chunks;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t t = i / chunks;
    const int c = (int)(i % chunks);
    float g[8], u[8];
    Unpack8(*reinterpret_cast<const uint4*>(gu + t * 2 * inter + c * 8), g);
    Unpack8(*reinterpret_cast<const uint4*>(gu + t * 2 * inter + inter + c * 8), u);
#pragma unroll
    for (int e = 0; e < 8; ++e) g[e] = g[e] / (1.f + __expf(-g[e])) * u[e];
    *reinterpret_cast<uint4*>(out + t * inter + c * 8) = Pack8(g);
  }
}

__global__ void FillRandomKernel(__nv_bfloat16* data, int64_t n, uint64_t seed,
                                 float scale) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    float u = (z >> 40) * (1.f / 16777216.f);  // [0, 1)
    data[i] = __float2bfloat16((2.f * u - 1.f) * scale);
  }
}

Status LastError(const std::string& who) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::Error(who + "launch failed: " + cudaGetErrorString(e));
  return Status::Ok();
}

int GridFor(int64_t work, int threads) {
  int64_t blocks = (work + threads - 1) / threads;
  return (int)std::min<int64_t>(blocks, 132 * 32);
}

}  // namespace

Status LaunchAddRmsNorm(const Bf16* x, Bf16* residual, const Bf16* weight,
                        int tokens, int hidden, float eps, Bf16* out,
                        cudaStream_t stream) {
  const std::string who = "LaunchAddRmsNorm: ";
  if (!x || !weight || !out) return Status::Error(who + "null pointer argument");
  if (tokens <= 0 || hidden <= 0 || hidden % 8 != 0)
    return Status::Error(who + "need tokens > 0 and hidden a positive multiple of 8");
  if (!(eps > 0.f)) return Status::Error(who + "eps must be positive");
  AddRmsNormKernel<<<tokens, kNormThreads, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(x),
      reinterpret_cast<__nv_bfloat16*>(residual),
      reinterpret_cast<const __nv_bfloat16*>(weight), hidden, eps,
      reinterpret_cast<__nv_bfloat16*>(out));
  return LastError(who);
}

Status LaunchRotaryKvWrite(const Bf16* qkv, const int32_t* positions,
                           const int32_t* slot_mapping, int tokens, int heads,
                           int kv_heads, int head_dim, float theta, Bf16* q_out,
                           Bf16* k_cache, Bf16* v_cache, cudaStream_t stream) {
  const std::string who = "LaunchRotaryKvWrite: ";
  if (!qkv || !positions || !slot_mapping || !q_out || !k_cache || !v_cache)
    return Status::Error(who + "null pointer argument");
  if (tokens <= 0 || heads <= 0 || kv_heads <= 0 || heads % kv_heads != 0)
    return Status::Error(who + "need tokens, heads, kv_heads > 0 and heads a multiple of kv_heads");
  if (head_dim <= 0 || head_dim % 2 != 0)
    return Status::Error(who + "head_dim must be positive and even");
  if (!(theta > 1.f)) return Status::Error(who + "rotary theta must exceed 1");
  RotaryKvWriteKernel<<<tokens, 128, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(qkv), positions, slot_mapping, heads,
      kv_heads, head_dim, std::log2(theta), reinterpret_cast<__nv_bfloat16*>(q_out),
      reinterpret_cast<__nv_bfloat16*>(k_cache),
      reinterpret_cast<__nv_bfloat16*>(v_cache));
  return LastError(who);
}

Status LaunchSiluMul(const Bf16* gate_up, int tokens, int inter, Bf16* out,
                     cudaStream_t stream) {
  const std::string who = "LaunchSiluMul: ";
  if (!gate_up || !out) return Status::Error(who + "null pointer argument");
  if (tokens <= 0 || inter <= 0 || inter % 8 != 0)
    return Status::Error(who + "need tokens > 0 and inter a positive multiple of 8");
  SiluMulKernel<<<GridFor((int64_t)tokens * inter / 8, 256), 256, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(gate_up), tokens, inter,
      reinterpret_cast<__nv_bfloat16*>(out));
  return LastError(who);
}

Status LaunchFillRandomBf16(Bf16* data, int64_t n, uint64_t seed, float scale,
                            cudaStream_t stream) {
  const std::string who = "LaunchFillRandomBf16: ";
  if (!data || n <= 0) return Status::Error(who + "need a buffer and n > 0");
  FillRandomKernel<<<GridFor(n, 256), 256, 0, stream>>>(
      reinterpret_cast<__nv_bfloat16*>(data), n, seed, scale);
  return LastError(who);
}

}  // namespace servesim::kernels
