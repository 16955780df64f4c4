// Chunked causal prefill attention over the paged KV cache, flash-attention-2
// style on the tensor cores (mma.sync m16n8k16, bf16 in, fp32 accumulate).
//
// Math: new token i of sequence b sits at position p = ctx_b + i and sees
// keys j <= p (cached context plus the chunk up to itself), so chunked
// prefill and prefix-cache hits run exactly as the engine runs them:
//   out_i = sum_{j<=p} e^(s_ij - m_i) v_j / sum_{j<=p} e^(s_ij - m_i),
//   s_ij = scale q_i . k_j.
// Grid: (query head, 64-query tile, sequence); the query head is the fastest
// grid index so the heads sharing a KV head run together and share its K/V
// tiles through L2. Each of 4 warps owns 16 query rows; Q stays in registers
// as A fragments, S = Q K^T and O += P V are mma.sync, the online softmax
// (running max m, sum l, rescale by exp2(m_old - m_new)) runs on the S
// accumulators in registers: the S accumulator layout of one 16x8 tile is
// exactly the A layout of P for the next product, so P never leaves them.
//
// Fragment layouts (PTX ISA, mma.m16n8k16 .bf16), gid = lane / 4, tig = lane % 4:
//   A (16x16, row): reg0 (row gid, cols 2tig..+1), reg1 (row gid+8, same),
//                   reg2 (row gid, cols 2tig+8..+9), reg3 (row gid+8, same)
//   B (16x8, col):  reg0 (k rows 2tig..+1, col gid), reg1 (k rows 2tig+8..+9)
//   C (16x8 f32):   c0,c1 (row gid, cols 2tig..+1), c2,c3 (row gid+8)
// The lower 16 bits of a register hold the lower-indexed element.
//
// Cost: FLOPs = 4 * heads * head_dim * sum_i (ctx + i + 1) (QK^T and PV, the
// causal half only); bytes ~ (q + out) + K/V of each KV head re-read from L2
// per 64-query tile. At 8k tokens it is matrix-bound: compare the achieved
// FLOP/s with the measured cuBLAS bf16 rate.
//
// CPU reference: PrefillAttentionRef (attention_reference.cc).
#include <cuda_bf16.h>

#include <cmath>
#include <string>

#include "kernels/attention.h"
#include "kernels/attention_checks.h"

namespace servesim::kernels {
namespace {

constexpr int kThreads = 128;
constexpr int kBr = 64;  // query rows per block (16 per warp)
constexpr int kBc = 64;  // keys per tile
constexpr float kLog2e = 1.4426950408889634f;

__device__ inline void Mma16816(float (&d)[4], const uint32_t (&a)[4],
                                uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ inline uint32_t Pack(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo
  return *reinterpret_cast<uint32_t*>(&v);
}

__device__ inline uint32_t Ld32(const __nv_bfloat16* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

__device__ inline uint32_t PackRaw(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return uint32_t(__bfloat16_as_ushort(lo)) | (uint32_t(__bfloat16_as_ushort(hi)) << 16);
}

// Stages rows [0, 64) of a tile into smem[row][D + 8]: row r comes from
// src_row(r) (a global pointer) or is zero when src_row returns null.
template <int D, typename RowFn>
__device__ inline void StageTile(__nv_bfloat16 (*smem)[D + 8], RowFn src_row) {
  constexpr int kChunks = D / 8;
  constexpr int kLoads = kBc * kChunks / kThreads;
  uint4 r[kLoads];
#pragma unroll
  for (int i = 0; i < kLoads; ++i) {
    int c = threadIdx.x + i * kThreads;
    const __nv_bfloat16* p = src_row(c / kChunks);
    r[i] = p ? *reinterpret_cast<const uint4*>(p + (c % kChunks) * 8) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int i = 0; i < kLoads; ++i) {
    int c = threadIdx.x + i * kThreads;
    *reinterpret_cast<uint4*>(&smem[c / kChunks][(c % kChunks) * 8]) = r[i];
  }
}

template <int D>
__global__ void __launch_bounds__(kThreads)
    PrefillKernel(const __nv_bfloat16* __restrict__ q,
                  const __nv_bfloat16* __restrict__ kc,
                  const __nv_bfloat16* __restrict__ vc,
                  const int32_t* __restrict__ block_table,
                  const int32_t* __restrict__ q_start,
                  const int32_t* __restrict__ context_lens, int heads,
                  int kv_heads, int block_size, int max_blocks, float scale_log2,
                  __nv_bfloat16* __restrict__ out) {
  __shared__ __align__(16) __nv_bfloat16 ks[kBc][D + 8];  // Q first, then K
  __shared__ __align__(16) __nv_bfloat16 vs[kBc][D + 8];
  const int h = blockIdx.x, b = blockIdx.z, i0 = blockIdx.y * kBr;
  const int q0 = q_start[b], n_new = q_start[b + 1] - q0;
  if (i0 >= n_new) return;
  const int ctx = context_lens[b], total = ctx + n_new;
  const int kvh = h / (heads / kv_heads);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int gid = lane >> 2, tig = lane & 3;
  const int32_t* table = block_table + (int64_t)b * max_blocks;
  const int64_t tok_stride = (int64_t)kv_heads * D;

  // Q tile -> registers (A fragments for the D/16 k-steps of Q K^T).
  StageTile<D>(ks, [&](int r) -> const __nv_bfloat16* {
    return i0 + r < n_new ? q + ((int64_t)(q0 + i0 + r) * heads + h) * D : nullptr;
  });
  __syncthreads();
  uint32_t qa[D / 16][4];
  const int r0 = warp * 16 + gid;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    qa[kk][0] = Ld32(&ks[r0][kk * 16 + 2 * tig]);
    qa[kk][1] = Ld32(&ks[r0 + 8][kk * 16 + 2 * tig]);
    qa[kk][2] = Ld32(&ks[r0][kk * 16 + 8 + 2 * tig]);
    qa[kk][3] = Ld32(&ks[r0 + 8][kk * 16 + 8 + 2 * tig]);
  }
  __syncthreads();

  float o[D / 8][4] = {};
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;  // rows r0, r0 + 8
  const int pos0 = ctx + i0 + r0, pos1 = pos0 + 8;  // positions of my two rows
  const int key_end = min(total, ctx + i0 + kBr);   // last row's keys + 1
  auto kv_row = [&](const __nv_bfloat16* base, int j) -> const __nv_bfloat16* {
    if (j >= key_end) return nullptr;
    int64_t slot = (int64_t)table[j / block_size] * block_size + j % block_size;
    return base + slot * tok_stride + (int64_t)kvh * D;
  };

  for (int kb = 0; kb < key_end; kb += kBc) {
    StageTile<D>(ks, [&](int r) { return kv_row(kc, kb + r); });
    StageTile<D>(vs, [&](int r) { return kv_row(vc, kb + r); });
    __syncthreads();
    // S = Q K^T for 8 tiles of 8 keys.
    float s[kBc / 8][4] = {};
#pragma unroll
    for (int j = 0; j < kBc / 8; ++j) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t b0 = Ld32(&ks[j * 8 + gid][kk * 16 + 2 * tig]);
        uint32_t b1 = Ld32(&ks[j * 8 + gid][kk * 16 + 8 + 2 * tig]);
        Mma16816(s[j], qa[kk], b0, b1);
      }
    }
    // Mask, scale into log2 units, row max (rows spread over a quad).
    float mx0 = m0, mx1 = m1;
#pragma unroll
    for (int j = 0; j < kBc / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = kb + j * 8 + 2 * tig + (e & 1);
        const int pos = e < 2 ? pos0 : pos1;
        float v = (key <= pos && key < total) ? s[j][e] * scale_log2 : -INFINITY;
        s[j][e] = v;
        if (e < 2) mx0 = fmaxf(mx0, v); else mx1 = fmaxf(mx1, v);
      }
    }
#pragma unroll
    for (int off = 1; off <= 2; off <<= 1) {
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, off));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, off));
    }
    // Key 0 is in the first tile and visible to every row, so mx is finite.
    const float a0 = exp2f(m0 - mx0), a1 = exp2f(m1 - mx1);
    m0 = mx0;
    m1 = mx1;
    float sum0 = 0.f, sum1 = 0.f;
#pragma unroll
    for (int j = 0; j < kBc / 8; ++j) {
      s[j][0] = exp2f(s[j][0] - m0);
      s[j][1] = exp2f(s[j][1] - m0);
      s[j][2] = exp2f(s[j][2] - m1);
      s[j][3] = exp2f(s[j][3] - m1);
      sum0 += s[j][0] + s[j][1];
      sum1 += s[j][2] + s[j][3];
    }
    l0 = l0 * a0 + sum0;  // per-thread partial sums; the quad adds them at the end
    l1 = l1 * a1 + sum1;
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      o[j][0] *= a0;
      o[j][1] *= a0;
      o[j][2] *= a1;
      o[j][3] *= a1;
    }
    // O += P V: P's A fragments are the S accumulators of key tiles 2kk, 2kk+1.
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t pa[4] = {Pack(s[2 * kk][0], s[2 * kk][1]), Pack(s[2 * kk][2], s[2 * kk][3]),
                        Pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                        Pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      const int k0 = kk * 16 + 2 * tig;
#pragma unroll
      for (int j = 0; j < D / 8; ++j) {
        const int d = j * 8 + gid;
        uint32_t b0 = PackRaw(vs[k0][d], vs[k0 + 1][d]);
        uint32_t b1 = PackRaw(vs[k0 + 8][d], vs[k0 + 9][d]);
        Mma16816(o[j], pa, b0, b1);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int off = 1; off <= 2; off <<= 1) {
    l0 += __shfl_xor_sync(0xffffffffu, l0, off);
    l1 += __shfl_xor_sync(0xffffffffu, l1, off);
  }
  const float inv0 = 1.f / l0, inv1 = 1.f / l1;
  const int row0 = i0 + r0, row1 = row0 + 8;
#pragma unroll
  for (int j = 0; j < D / 8; ++j) {
    const int d = j * 8 + 2 * tig;
    if (row0 < n_new)
      *reinterpret_cast<uint32_t*>(out + ((int64_t)(q0 + row0) * heads + h) * D + d) =
          Pack(o[j][0] * inv0, o[j][1] * inv0);
    if (row1 < n_new)
      *reinterpret_cast<uint32_t*>(out + ((int64_t)(q0 + row1) * heads + h) * D + d) =
          Pack(o[j][2] * inv1, o[j][3] * inv1);
  }
}

}  // namespace

Status LaunchPrefillAttention(const Bf16* q, const PagedKvCache& kv,
                              const int32_t* q_start,
                              const int32_t* context_lens, int batch,
                              int heads, int max_new, int max_total,
                              float scale, Bf16* out, cudaStream_t stream) {
  const char* who = "LaunchPrefillAttention";
  Status st = CheckPagedArgs(who, q, out, kv, batch, heads, max_total);
  if (!st.ok()) return st;
  if (!q_start || !context_lens)
    return Status::Error(std::string(who) + ": null pointer argument");
  if (max_new <= 0 || max_new > max_total)
    return Status::Error(std::string(who) + ": need 0 < max_new <= max_total");
  if (!(scale > 0.f) || !std::isfinite(scale))
    return Status::Error(std::string(who) + ": scale must be a positive finite number");
  dim3 grid(heads, (max_new + kBr - 1) / kBr, batch);
  if (grid.y > 65535 || batch > 65535)
    return Status::Error(std::string(who) + ": too many query tiles or sequences");
  auto args = [&](auto kernel) {
    kernel<<<grid, kThreads, 0, stream>>>(
        reinterpret_cast<const __nv_bfloat16*>(q),
        reinterpret_cast<const __nv_bfloat16*>(kv.k),
        reinterpret_cast<const __nv_bfloat16*>(kv.v), kv.block_table, q_start,
        context_lens, heads, kv.kv_heads, kv.block_size, kv.max_blocks_per_seq,
        scale * kLog2e, reinterpret_cast<__nv_bfloat16*>(out));
  };
  if (kv.head_dim == 64) args(PrefillKernel<64>); else args(PrefillKernel<128>);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return Status::Error(std::string(who) + ": launch failed: " + cudaGetErrorString(e));
  return Status::Ok();
}

}  // namespace servesim::kernels
