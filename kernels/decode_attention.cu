// Paged decode attention (one new token per sequence), flash-decoding style.
//
// Math, for query head h of sequence b with n = seq_lens[b] cached tokens:
//   s_j = scale * q . k_j,  out = sum_j e^(s_j - M) v_j / sum_j e^(s_j - M).
// The context is cut into partitions of kDecodePartition tokens. Pass 1
// (grid: partition x kv head x sequence) runs an online softmax over its
// partition in tiles of kTile tokens, for all query heads of one KV head
// group at once (GQA: each K/V byte is read from memory once), and writes
// the unnormalised accumulator with its running max m and sum l. Pass 2
// combines the partitions: M = max m_p, L = sum l_p e^(m_p - M),
// out = sum acc_p e^(m_p - M) / L. Scores are kept in log2 units
// (scale * log2 e folded into q) so exp is exp2.
//
// Cost: bytes = 2 (K and V) * sum_b n_b * kv_heads * head_dim * 2 plus
// q/out (negligible); FLOPs = 4 * heads * head_dim * sum_b n_b. At
// 2 FLOP/byte per query head it is memory-bound: compare achieved bytes/s
// with the measured copy bandwidth (batch 64 x 4k context, 8 KV heads x 128
// = 1.07 GB per layer, ~0.25 ms at 4.3 TB/s).
//
// The CPU reference with the same partitioning is PagedDecodeAttentionRef
// in attention_reference.cc.
#include <cuda_bf16.h>

#include <cmath>
#include <string>

#include "kernels/attention.h"
#include "kernels/attention_checks.h"

namespace servesim::kernels {
namespace {

constexpr int kThreads = 128;
constexpr int kTile = 64;  // tokens of K/V staged in shared memory at once
constexpr float kLog2e = 1.4426950408889634f;

__device__ inline float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// D: head_dim; G: the largest group (query heads per KV head) this
// instantiation serves; the actual group g <= G is a run-time value.
template <int D, int G>
__global__ void __launch_bounds__(kThreads)
    DecodePartialKernel(const __nv_bfloat16* __restrict__ q,
                        const __nv_bfloat16* __restrict__ kc,
                        const __nv_bfloat16* __restrict__ vc,
                        const int32_t* __restrict__ block_table,
                        const int32_t* __restrict__ seq_lens, int heads,
                        int kv_heads, int block_size, int max_blocks,
                        int max_splits, float scale_log2, float* __restrict__ ws_acc,
                        float* __restrict__ ws_ml) {
  constexpr int kChunks = D / 8;               // 16-byte chunks per K/V row
  constexpr int kLoads = kTile * kChunks / kThreads;
  constexpr int kSubsets = kThreads / (D / 2);  // PV: head subsets of threads
  constexpr int kHeadsPV = (G + kSubsets - 1) / kSubsets;
  constexpr int kHeadsQK = (G + 1) / 2;          // QK: 2 subsets of 64 threads
  __shared__ __align__(16) __nv_bfloat16 ks[kTile][D + 8];
  __shared__ __align__(16) __nv_bfloat16 vs[kTile][D + 8];
  __shared__ __align__(16) float qs[G][D];
  __shared__ float ps[G][kTile];
  __shared__ float m_s[G], l_s[G], alpha_s[G];

  const int split = blockIdx.x, kvh = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = heads / kv_heads;
  const int len = seq_lens[b];
  const int start = split * kDecodePartition;
  if (start >= len) return;  // pass 2 ignores partitions past the end
  const int end = min(start + kDecodePartition, len);

  for (int i = tid; i < G * D; i += kThreads) {
    int h = i / D, d = i % D;
    qs[h][d] = h < g ? __bfloat162float(q[((int64_t)b * heads + kvh * g + h) * D + d]) *
                           scale_log2
                     : 0.f;
  }
  if (tid < G) {
    m_s[tid] = -INFINITY;
    l_s[tid] = 0.f;
  }
  float acc[kHeadsPV][2] = {};
  const int dp = tid % (D / 2), hsub = tid / (D / 2);
  const int tt = tid % kTile, qsub = tid / kTile;
  const int32_t* table = block_table + (int64_t)b * max_blocks;
  const int64_t row_stride = (int64_t)kv_heads * D;

  for (int t0 = start; t0 < end; t0 += kTile) {
    const int n = min(kTile, end - t0);
    // Stage K and V: all loads issued before any store, 16 bytes each.
    uint4 kr[kLoads], vr[kLoads];
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      int c = tid + i * kThreads, row = c / kChunks, col = c % kChunks;
      kr[i] = vr[i] = make_uint4(0, 0, 0, 0);
      if (row < n) {
        int tok = t0 + row;
        int64_t slot = (int64_t)table[tok / block_size] * block_size + tok % block_size;
        int64_t off = slot * row_stride + (int64_t)kvh * D + col * 8;
        kr[i] = *reinterpret_cast<const uint4*>(kc + off);
        vr[i] = *reinterpret_cast<const uint4*>(vc + off);
      }
    }
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {
      int c = tid + i * kThreads, row = c / kChunks, col = c % kChunks;
      *reinterpret_cast<uint4*>(&ks[row][col * 8]) = kr[i];
      *reinterpret_cast<uint4*>(&vs[row][col * 8]) = vr[i];
    }
    __syncthreads();
    // Scores: thread owns token tt and heads qsub, qsub + 2, ...
    {
      float s[kHeadsQK] = {};
#pragma unroll
      for (int d0 = 0; d0 < D; d0 += 8) {
        uint4 raw = *reinterpret_cast<const uint4*>(&ks[tt][d0]);
        const __nv_bfloat162* k2 = reinterpret_cast<const __nv_bfloat162*>(&raw);
        float kf[8];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float2 f = __bfloat1622float2(k2[e]);
          kf[2 * e] = f.x;
          kf[2 * e + 1] = f.y;
        }
#pragma unroll
        for (int j = 0; j < kHeadsQK; ++j) {
          const int h = qsub + 2 * j;
          if (h < G) {
#pragma unroll
            for (int e = 0; e < 8; ++e) s[j] += qs[h][d0 + e] * kf[e];
          }
        }
      }
#pragma unroll
      for (int j = 0; j < kHeadsQK; ++j) {
        const int h = qsub + 2 * j;
        if (h < G) ps[h][tt] = tt < n ? s[j] : -INFINITY;
      }
    }
    __syncthreads();
    // Online softmax update, one warp per head.
    for (int h = warp; h < g; h += kThreads / 32) {
      float v0 = ps[h][lane], v1 = ps[h][lane + 32];
      float m_old = m_s[h];
      float m_new = fmaxf(m_old, WarpMax(fmaxf(v0, v1)));
      float p0 = exp2f(v0 - m_new), p1 = exp2f(v1 - m_new);
      float sum = WarpSum(p0 + p1);
      ps[h][lane] = p0;
      ps[h][lane + 32] = p1;
      __syncwarp();
      if (lane == 0) {
        float alpha = exp2f(m_old - m_new);  // 0 on the first tile
        alpha_s[h] = alpha;
        l_s[h] = l_s[h] * alpha + sum;
        m_s[h] = m_new;
      }
    }
    __syncthreads();
    // P V: thread owns dims 2dp, 2dp+1 of heads hsub, hsub + kSubsets, ...
#pragma unroll
    for (int j = 0; j < kHeadsPV; ++j) {
      const int h = hsub + kSubsets * j;
      if (h < G) {
        float a = alpha_s[h];
        acc[j][0] *= a;
        acc[j][1] *= a;
      }
    }
    for (int t = 0; t < n; ++t) {
      float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&vs[t][2 * dp]));
#pragma unroll
      for (int j = 0; j < kHeadsPV; ++j) {
        const int h = hsub + kSubsets * j;
        if (h < G) {
          float p = ps[h][t];
          acc[j][0] += p * v.x;
          acc[j][1] += p * v.y;
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kHeadsPV; ++j) {
    const int h = hsub + kSubsets * j;
    if (h < g) {
      int64_t row = ((int64_t)b * heads + kvh * g + h) * max_splits + split;
      *reinterpret_cast<float2*>(ws_acc + row * D + 2 * dp) = make_float2(acc[j][0], acc[j][1]);
      if (dp == 0) {
        ws_ml[row * 2] = m_s[h];
        ws_ml[row * 2 + 1] = l_s[h];
      }
    }
  }
}

// Pass 2: grid (heads, batch), D threads; combines the partitions.
template <int D>
__global__ void DecodeCombineKernel(const float* __restrict__ ws_acc,
                                    const float* __restrict__ ws_ml,
                                    const int32_t* __restrict__ seq_lens,
                                    int heads, int max_splits,
                                    __nv_bfloat16* __restrict__ out) {
  const int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
  const int splits = (seq_lens[b] + kDecodePartition - 1) / kDecodePartition;
  const int64_t row0 = ((int64_t)b * heads + h) * max_splits;
  float mx = -INFINITY;
  for (int s = 0; s < splits; ++s) mx = fmaxf(mx, ws_ml[(row0 + s) * 2]);
  float total = 0.f, o = 0.f;
  for (int s = 0; s < splits; ++s) {
    float w = exp2f(ws_ml[(row0 + s) * 2] - mx);
    total += ws_ml[(row0 + s) * 2 + 1] * w;
    o += ws_acc[(row0 + s) * D + d] * w;
  }
  out[((int64_t)b * heads + h) * D + d] = __float2bfloat16(total > 0.f ? o / total : 0.f);
}

template <int D, int G>
void LaunchDecode(const PagedKvCache& kv, const Bf16* q, const int32_t* seq_lens,
                  int batch, int heads, int max_splits, float scale, float* ws_acc,
                  float* ws_ml, Bf16* out, cudaStream_t stream) {
  dim3 grid(max_splits, kv.kv_heads, batch);
  DecodePartialKernel<D, G><<<grid, kThreads, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(q),
      reinterpret_cast<const __nv_bfloat16*>(kv.k),
      reinterpret_cast<const __nv_bfloat16*>(kv.v), kv.block_table, seq_lens,
      heads, kv.kv_heads, kv.block_size, kv.max_blocks_per_seq, max_splits,
      scale * kLog2e, ws_acc, ws_ml);
  DecodeCombineKernel<D><<<dim3(heads, batch), D, 0, stream>>>(
      ws_acc, ws_ml, seq_lens, heads, max_splits,
      reinterpret_cast<__nv_bfloat16*>(out));
}

template <int D>
void DispatchGroup(int g, const PagedKvCache& kv, const Bf16* q,
                   const int32_t* seq_lens, int batch, int heads, int max_splits,
                   float scale, float* ws_acc, float* ws_ml, Bf16* out,
                   cudaStream_t stream) {
  if (g <= 1)
    LaunchDecode<D, 1>(kv, q, seq_lens, batch, heads, max_splits, scale, ws_acc, ws_ml, out, stream);
  else if (g <= 2)
    LaunchDecode<D, 2>(kv, q, seq_lens, batch, heads, max_splits, scale, ws_acc, ws_ml, out, stream);
  else if (g <= 4)
    LaunchDecode<D, 4>(kv, q, seq_lens, batch, heads, max_splits, scale, ws_acc, ws_ml, out, stream);
  else if (g <= 8)
    LaunchDecode<D, 8>(kv, q, seq_lens, batch, heads, max_splits, scale, ws_acc, ws_ml, out, stream);
  else
    LaunchDecode<D, 16>(kv, q, seq_lens, batch, heads, max_splits, scale, ws_acc, ws_ml, out, stream);
}

int MaxSplits(int max_seq_len) {
  return (max_seq_len + kDecodePartition - 1) / kDecodePartition;
}

}  // namespace

size_t DecodeAttentionWorkspaceBytes(int batch, int heads, int max_seq_len,
                                     int head_dim) {
  if (batch <= 0 || heads <= 0 || max_seq_len <= 0 || head_dim <= 0) return 0;
  size_t rows = size_t(batch) * heads * MaxSplits(max_seq_len);
  // acc rows, then (m, l) pairs; acc rows are 16-byte aligned.
  return rows * (size_t(head_dim) + 2) * sizeof(float);
}

Status LaunchPagedDecodeAttention(const Bf16* q, const PagedKvCache& kv,
                                  const int32_t* seq_lens, int batch, int heads,
                                  int max_seq_len, float scale, void* workspace,
                                  size_t workspace_bytes, Bf16* out,
                                  cudaStream_t stream) {
  const char* who = "LaunchPagedDecodeAttention";
  Status st = CheckPagedArgs(who, q, out, kv, batch, heads, max_seq_len);
  if (!st.ok()) return st;
  if (!seq_lens || !workspace) return Status::Error(std::string(who) + ": null pointer argument");
  const size_t need = DecodeAttentionWorkspaceBytes(batch, heads, max_seq_len, kv.head_dim);
  if (workspace_bytes < need)
    return Status::Error(std::string(who) + ": workspace of " +
                         std::to_string(workspace_bytes) + " bytes, need " +
                         std::to_string(need));
  if (!(scale > 0.f) || !std::isfinite(scale))
    return Status::Error(std::string(who) + ": scale must be a positive finite number");
  const int max_splits = MaxSplits(max_seq_len);
  float* ws_acc = static_cast<float*>(workspace);
  float* ws_ml = ws_acc + size_t(batch) * heads * max_splits * kv.head_dim;
  const int g = heads / kv.kv_heads;
  if (kv.head_dim == 64)
    DispatchGroup<64>(g, kv, q, seq_lens, batch, heads, max_splits, scale, ws_acc, ws_ml, out, stream);
  else
    DispatchGroup<128>(g, kv, q, seq_lens, batch, heads, max_splits, scale, ws_acc, ws_ml, out, stream);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::Error(std::string(who) + ": launch failed: " + cudaGetErrorString(e));
  return Status::Ok();
}

}  // namespace servesim::kernels
