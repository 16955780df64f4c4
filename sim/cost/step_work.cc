// Model FLOPs and bytes of a step (see step_work.h).
#include "sim/cost/step_work.h"

namespace servesim {

StepWorkCounter::StepWorkCounter(const ModelSpec& m, int tp) {
  const double t = tp > 0 ? tp : 1;
  // Active MLP parameters: top-k experts of an MoE layer.
  const double mlp = static_cast<double>(m.MlpParamsPerLayer()) /
                     (m.is_moe() ? m.num_experts : 1) * (m.is_moe() ? m.experts_per_token : 1);
  const double per_layer = static_cast<double>(m.AttentionParamsPerLayer()) + mlp;
  linear_flops_per_token_ = 2 * per_layer * m.num_layers / t;
  attn_flops_per_pair_ = 4.0 * m.num_heads * m.head_dim * m.num_layers / t;
  head_flops_ = 2.0 * m.hidden_size * m.vocab_size / t;
  weight_bytes_ = m.WeightBytesPerGpu(tp);
  kv_bytes_per_token_ = m.KvBytesPerTokenPerGpu(tp);
}

StepWork StepWorkCounter::Count(const BatchShape& batch) const {
  // Every term is an integer or a half-integer far below 2^52: the sums
  // are exact, whatever their order, and the decode aggregate (one token
  // each, attending to c + 1 keys) adds what its sequences would.
  const double agg = static_cast<double>(batch.decode_seqs);
  const double agg_context = static_cast<double>(batch.decode_context);
  double tokens = agg, pairs = agg_context + agg, context = agg_context, sampled = agg;
  for (const SeqWork& s : batch.seqs) {
    const double n = s.new_tokens, c = s.context_tokens;
    tokens += n;
    pairs += n * (c + (n + 1) / 2);
    context += c;
    sampled += s.samples;
  }
  StepWork w;
  w.flops = linear_flops_per_token_ * tokens + attn_flops_per_pair_ * pairs + head_flops_ * sampled;
  w.hbm_bytes = batch.empty() ? 0 : weight_bytes_ + kv_bytes_per_token_ * (context + tokens);
  return w;
}

}  // namespace servesim
