// Attention shapes of MLA and sliding-window layers (see attention_shape.h).
#include "sim/cost/attention_shape.h"

#include <algorithm>
#include <cmath>

#include "sim/cost/roofline_cost_model.h"

namespace servesim {

AttentionShape DecodeShape(const ModelSpec& m, int tp, bool windowed) {
  AttentionShape s;
  s.q_heads = static_cast<double>(m.num_heads) / tp;
  s.kv_heads = m.KvHeadsPerGpu(tp);
  s.kv_bytes = s.act_bytes = m.kv_bytes;
  if (m.is_mla()) {
    s.qk_dim = m.kv_lora_rank + m.qk_rope_head_dim;
    s.v_dim = m.kv_lora_rank;
    s.cache_elems = m.kv_lora_rank + m.qk_rope_head_dim;
    s.act_bytes = m.dtype_bytes;
  } else {
    s.qk_dim = s.v_dim = m.head_dim;
    s.cache_elems = 2.0 * m.head_dim;
  }
  s.window = windowed ? m.sliding_window : 0;
  return s;
}

AttentionShape PrefillShape(const ModelSpec& m, int tp, bool windowed) {
  AttentionShape s = DecodeShape(m, tp, windowed);
  if (m.is_mla()) {
    const double nope = m.head_dim - m.qk_rope_head_dim;
    s.qk_dim = m.head_dim;
    s.v_dim = m.v_head_dim;
    s.context_flops_per_token = 2.0 * m.kv_lora_rank * s.q_heads * (nope + m.v_head_dim);
    s.context_bytes_per_token = m.dtype_bytes * s.q_heads * (m.head_dim + m.v_head_dim);
  }
  return s;
}

void AddPrefillRun(const AttentionShape& s, double n, double count, double context_sum,
                   AttentionWork* w) {
  // Sums over the run of keys (c + n), cached tokens (c), new tokens and
  // attended pairs (n c + n (n + 1) / 2).
  const double keys = context_sum + count * n;
  const double tokens = count * n;
  const double pairs = RunPairs(n, count, context_sum);
  w->flops += FlopsPerKey(s) * pairs +
              s.context_flops_per_token * context_sum;
  w->bytes += s.kv_bytes * s.kv_heads * s.cache_elems * keys +
              s.act_bytes * s.q_heads * (s.qk_dim + s.v_dim) * tokens +
              2 * s.context_bytes_per_token * context_sum;
  w->items += tokens * s.q_heads;
}

bool ExactSums(const AttentionShape& s) {
  const auto integral = [](double x) { return x == std::floor(x); };
  return s.window == 0 && integral(s.q_heads) && integral(s.kv_heads) &&
         integral(s.qk_dim) && integral(s.v_dim) && integral(s.cache_elems) &&
         integral(s.kv_bytes) && integral(s.act_bytes) &&
         integral(s.context_flops_per_token) && integral(s.context_bytes_per_token);
}

}  // namespace servesim
