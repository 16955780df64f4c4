// CPU references for every kernel family in kernels/ (float32 math shaped
// like the kernels, plus a naive float64 attention to check them against).
// Plain C++ and Eigen: built everywhere, with or without CUDA.
//
// Layouts shared with the CUDA kernels (row-major, innermost last):
//   q             [tokens][heads][head_dim]
//   paged K and V [num_blocks][block_size][kv_heads][head_dim]
//   block_table   [batch][max_blocks_per_seq]: logical block i of sequence b
//                 lives in physical block block_table[b * max_blocks + i]
//   GEMM          c[m][n] = sum_k a[m][k] * w[n][k]   (w is [out][in])
#pragma once

#include <cstdint>
#include <vector>

namespace servesim::kernels {

struct PagedKvRef {
  const float* k = nullptr;
  const float* v = nullptr;
  const int32_t* block_table = nullptr;
  int block_size = 16;
  int max_blocks_per_seq = 0;
  int kv_heads = 0;
  int head_dim = 0;
  // Element d of head h of token t of sequence b.
  const float* KeyRow(int b, int t, int h) const;
  const float* ValueRow(int b, int t, int h) const;
};

// Naive attention in float64: query r belongs to sequence query_seq[r] and
// sees keys [0, query_visible[r]) of it; out is [queries][heads][head_dim].
// softmax_j(scale * q.k_j) weighted sum of v_j, computed with the full score
// row and an exact max subtraction.
void NaivePagedAttention64(const float* q, const PagedKvRef& kv,
                           int num_queries, const int32_t* query_seq,
                           const int32_t* query_visible, int heads,
                           double scale, std::vector<double>* out);

// Decode: one query per sequence that sees all seq_lens[b] cached keys
// (the new token's K/V already written). Mirrors the kernel: the context is
// split into partitions of `partition` tokens, each partition runs an
// online softmax (running max m, running sum l, rescale by exp(m_old -
// m_new)), and the partitions are combined by their (m, l).
void PagedDecodeAttentionRef(const float* q, const PagedKvRef& kv,
                             const int32_t* seq_lens, int batch, int heads,
                             float scale, int partition, float* out);

// Prefill (chunked, causal): sequence b has context_lens[b] cached tokens and
// q_start[b+1] - q_start[b] new ones whose K/V are already in the cache at
// positions context_lens[b] + i; new token i sees keys [0, ctx + i]. Online
// softmax over key tiles of `tile` tokens, like the kernel.
void PrefillAttentionRef(const float* q, const PagedKvRef& kv,
                         const int32_t* q_start, const int32_t* context_lens,
                         int batch, int heads, float scale, int tile,
                         float* out);

// h = x + residual (residual is updated to h when non-null; otherwise h = x);
// out = h / sqrt(mean(h^2) + eps) * weight. Rows of `hidden` elements.
void AddRmsNormRef(const float* x, float* residual, const float* weight,
                   int tokens, int hidden, float eps, float* out);

// Rotary embedding, rotate-half (GPT-NeoX) form, in place on q [T][H][D] and
// k [T][KVH][D]: for i < D/2, angle = pos * theta^(-2i/D),
//   x'[i] = x[i] cos - x[i+D/2] sin,  x'[i+D/2] = x[i+D/2] cos + x[i] sin.
void RotaryRef(float* q, float* k, const int32_t* positions, int tokens,
               int heads, int kv_heads, int head_dim, float theta);

// out[t][i] = silu(gu[t][i]) * gu[t][inter + i], silu(x) = x / (1 + e^-x).
void SiluMulRef(const float* gate_up, int tokens, int inter, float* out);

// c = a w^T through Eigen in float32.
void GemmRef(const float* a, const float* w, int m, int n, int k, float* c);

// ||a - b|| / ||b|| over n elements; +inf if any a is not finite.
double RelativeError(const float* a, const double* b, size_t n);
double RelativeError(const float* a, const float* b, size_t n);

}  // namespace servesim::kernels
