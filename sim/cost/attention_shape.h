// The shape of one layer's attention on one GPU, for the architectures
// beyond GQA/MHA over the whole context: multi-head latent attention (MLA,
// DeepSeek-V2/V3) and sliding-window layers (gpt-oss). The roofline cost
// model and the step-work counter price attention from it.
//
// Per key, a query head does 2 x qk_dim FLOPs for its score and 2 x v_dim
// for the weighted value sum, and the kernel reads cache_elems values per
// cached KV head. GQA/MHA: qk_dim = v_dim = head_dim, cache_elems =
// 2 x head_dim (K and V).
//
// MLA, decode (vLLM's FlashMLA / Triton MLA backends run the "absorbed"
// form of the DeepSeek-V2 paper, section 2.1.3): the key up-projection is
// folded into the query and the value up-projection applied after
// attention, so each head attends over the cached latent itself: qk_dim =
// kv_lora_rank + qk_rope_head_dim (576 for V3), v_dim = kv_lora_rank (512),
// one cached "head" of 576 values shared by all query heads.
// MLA, prefill (vLLM's MLA prefill path, FlashAttention on decompressed
// keys and values): qk_dim = qk_nope + qk_rope (192), v_dim = v_head_dim
// (128), with every cached token's latent first up-projected by kv_b:
// 2 x kv_lora_rank x heads x (qk_nope + v_head_dim) FLOPs a cached token
// (new tokens' up-projection is a layer GEMM).
#pragma once

#include <algorithm>

#include "sim/model/model_spec.h"

namespace servesim {

struct AttentionShape {
  double q_heads = 0;      // per GPU
  double kv_heads = 0;     // cached heads per GPU (MLA: 1, the latent)
  double qk_dim = 0, v_dim = 0;
  double cache_elems = 0;  // values read per cached token and KV head
  double kv_bytes = 2;     // per cached value
  double act_bytes = 2;    // queries and outputs (bf16)
  double context_flops_per_token = 0;  // MLA prefill: latent up-projection
  double context_bytes_per_token = 0;  // the decompressed K and V it writes
  int window = 0;          // 0: attends over the whole context
};

AttentionShape DecodeShape(const ModelSpec& m, int tp, bool windowed);
AttentionShape PrefillShape(const ModelSpec& m, int tp, bool windowed);

// The work of one attention kernel on one GPU shard, for one layer: its
// FLOPs, bytes and kernel items, which the functions below add to.
struct AttentionWork {
  double flops = 0, bytes = 0, items = 0;
};
// FLOPs per attended key of one token (QK^T and PV): 2 q_heads (qk + v).
inline double FlopsPerKey(const AttentionShape& s) {
  return 2 * s.q_heads * (s.qk_dim + s.v_dim);
}
// sum over j = 1..n of min(c + j, window) (window 0: no limit).
inline double AttendedPairs(double n, double c, int window) {
  if (window <= 0 || c + n <= window) return n * (c + (n + 1) / 2);
  const double w = window;
  if (c >= w) return n * w;
  const double k = w - c;  // tokens j <= k still see all c + j keys
  return k * (c + (k + 1) / 2) + (n - k) * w;
}

// `seqs` decode tokens with contexts summing to context_sum. A windowed
// layer attends to at most window + 1 keys per token: counted as
// min(context_sum + seqs, seqs x (window + 1)), exact when every context
// is on one side of the window and an upper bound otherwise.
// (Inline, as AddPrefillWork: both run for every step, in the cost model
// and in the work counter.)
inline void AddDecodeWork(const AttentionShape& s, double seqs, double context_sum,
                          AttentionWork* w) {
  double keys = context_sum + seqs;  // sum of (c + 1)
  if (s.window > 0) keys = std::min(keys, seqs * (s.window + 1.0));
  w->flops += FlopsPerKey(s) * keys;
  w->bytes += s.kv_bytes * s.kv_heads * s.cache_elems * keys +
              s.act_bytes * s.q_heads * (s.qk_dim + s.v_dim) * seqs;
  w->items += s.kv_heads * seqs;
}
// n new tokens after c cached: token j (1..n) attends to c + j keys, or
// min(c + j, window) in a windowed layer.
inline void AddPrefillWork(const AttentionShape& s, double n, double c, AttentionWork* w) {
  const double keys = s.window > 0 ? std::min(c + n, s.window + n) : c + n;
  const double cached = keys - n;  // cached tokens whose latent is up-projected
  w->flops += FlopsPerKey(s) * AttendedPairs(n, c, s.window) +
              s.context_flops_per_token * cached;
  w->bytes += s.kv_bytes * s.kv_heads * s.cache_elems * keys +
              s.act_bytes * s.q_heads * (s.qk_dim + s.v_dim) * n +
              2 * s.context_bytes_per_token * cached;
  w->items += n * s.q_heads;
}
// `count` sequences of n new tokens each whose contexts sum to
// context_sum, in a layer without a window: AddPrefillWork's terms are
// linear in c, so this adds what AddPrefillWork over them one by one adds,
// to the bit when ExactSums(s) (every term then an integer far below 2^53).
void AddPrefillRun(const AttentionShape& s, double n, double count, double context_sum,
                   AttentionWork* w);
// Attended pairs of `count` sequences of n new tokens each, contexts
// summing to context_sum, no window: AttendedPairs summed over them
// (n c + n (n + 1) / 2 each).
inline double RunPairs(double n, double count, double context_sum) {
  return n * context_sum + count * (n * (n + 1) / 2);
}
// Whether every per-token coefficient of s is an integer and it has no
// window (what AddPrefillRun's exactness needs).
bool ExactSums(const AttentionShape& s);

}  // namespace servesim
