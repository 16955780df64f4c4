// Model FLOPs and bytes of a step (see step_work.h).
#include "sim/cost/step_work.h"

#include <algorithm>

#include "sim/core/check.h"
#include "sim/cost/roofline_cost_model.h"

namespace servesim {

StepWorkCounter::StepWorkCounter(const ModelSpec& m, int tp) {
  const double t = tp > 0 ? tp : 1;
  if (m.dense_layers == 0 && m.shared_experts == 0) {
    // Active MLP parameters: top-k experts of an MoE layer.
    const double mlp = static_cast<double>(m.MlpParamsPerLayer()) /
                       (m.is_moe() ? m.num_experts : 1) * (m.is_moe() ? m.experts_per_token : 1);
    const double per_layer = static_cast<double>(m.AttentionParamsPerLayer()) + mlp;
    linear_flops_per_token_ = 2 * per_layer * m.num_layers / t;
  } else {
    // DeepSeek: dense first layers, shared experts (the LM head is apart).
    const double head = static_cast<double>(m.vocab_size) * m.hidden_size;
    linear_flops_per_token_ = 2 * (static_cast<double>(m.ActiveParamCount()) - head) / t;
  }
  head_flops_ = 2.0 * m.hidden_size * m.vocab_size / t;
  weight_bytes_ = m.WeightBytesPerGpu(tp);
  if (m.is_moe()) {
    // The routed experts' share, read only for the experts a step's
    // tokens pick (ExpectedActiveExperts over the expert group's tokens).
    expert_bytes_ = m.ExpertWeightBytes() * m.MoeLayers() * m.num_experts * 3.0 *
                    m.hidden_size * m.intermediate_size /
                    (m.expert_parallel > 1 ? m.expert_parallel : (tp > 0 ? tp : 1));
    weight_bytes_ -= expert_bytes_;
    num_experts_ = m.num_experts;
    top_k_ = m.experts_per_token;
    group_ = m.ExpertDataParallel(tp > 0 ? tp : 1);
  }
  kv_bytes_per_token_ = m.KvBytesPerTokenPerGpu(tp);
  const int shard = tp > 0 ? tp : 1;
  full_layers_ = m.FullAttentionLayers();
  windowed_layers_ = m.sliding_window_layers;
  window_ = m.sliding_window;
  windowed_kv_bytes_per_token_ =
      windowed_layers_ * m.KvElementsPerTokenPerLayer(shard) * m.kv_bytes;
  decode_full_ = DecodeShape(m, shard, false);
  decode_windowed_ = DecodeShape(m, shard, true);
  prefill_full_ = PrefillShape(m, shard, false);
  prefill_windowed_ = PrefillShape(m, shard, true);
  // The coefficients AddPrefillWork and AddDecodeWork scale by (the same
  // doubles).
  const AttentionShape& p = prefill_full_;
  const AttentionShape& d = decode_full_;
  prefill_flops_per_pair_ = FlopsPerKey(p);
  decode_flops_per_key_ = FlopsPerKey(d);
  scale_sums_ = windowed_layers_ == 0 && p.context_flops_per_token == 0 && ExactSums(p) &&
                ExactSums(d);
}

template <bool kSummed>
StepWork StepWorkCounter::CountAs(const BatchShape& batch) const {
  // Every term is an integer or a half-integer far below 2^52: the sums
  // are exact, whatever their order, and the decode aggregate (one token
  // each, attending to c + 1 keys) adds what its sequences would.
  // kSummed (no window, no MLA latent term: scale_sums_): every pair and
  // key count is an integer (n (c + (n + 1) / 2) is n c + n (n + 1) / 2),
  // and so is each product with the integral coefficients, so scaling the
  // sums once adds what scaling each term did.
  const double agg = static_cast<double>(batch.decode_seqs);
  const double agg_context = static_cast<double>(batch.decode_context);
  double tokens = agg, context = agg_context, sampled = agg;
  double decodes = agg, decode_context = agg_context;
  double pairs = 0;          // kSummed: prefill query-key pairs
  double windowed_keys = 0;  // tokens the windowed layers read or write
  AttentionWork full, windowed;
  for (const SeqWork& s : batch.seqs) {
    const double n = s.new_tokens, c = s.context_tokens;
    tokens += n;
    context += c;
    sampled += s.samples;
    if (IsDecode(s)) {
      decodes += 1;
      decode_context += c;
    } else if (n > 0) {
      if constexpr (kSummed) {
        pairs += AttendedPairs(n, c, 0);
      } else {
        AddPrefillWork(prefill_full_, n, c, &full);
        if (windowed_layers_ > 0) {
          AddPrefillWork(prefill_windowed_, n, c, &windowed);
          windowed_keys += std::min(c + n, window_ + n);
        }
      }
    }
  }
  for (const SeqRun& r : batch.runs) {  // no windowed layers (PricesRuns)
    SERVESIM_CHECK(windowed_layers_ == 0, "StepWorkCounter: a run in a windowed model");
    const double n = r.new_tokens, count = static_cast<double>(r.count);
    const double c = static_cast<double>(r.context_sum);
    tokens += n * count;
    context += c;
    sampled += count;
    if constexpr (kSummed) {
      pairs += RunPairs(n, count, c);
    } else {
      AddPrefillRun(prefill_full_, n, count, c, &full);
    }
  }
  if constexpr (kSummed) {
    full.flops = prefill_flops_per_pair_ * pairs;
    if (decodes > 0) full.flops += decode_flops_per_key_ * (decode_context + decodes);
  } else if (decodes > 0) {
    AddDecodeWork(decode_full_, decodes, decode_context, &full);
    if (windowed_layers_ > 0) {
      AddDecodeWork(decode_windowed_, decodes, decode_context, &windowed);
      windowed_keys += std::min(decode_context + decodes, decodes * (window_ + 1.0));
    }
  }
  StepWork w;
  w.flops = linear_flops_per_token_ * tokens + full_layers_ * full.flops +
            windowed_layers_ * windowed.flops + head_flops_ * sampled;
  if (batch.empty()) return w;
  double experts = 0;
  if (num_experts_ > 1) {
    experts = expert_bytes_ * ExpectedActiveExperts(num_experts_, top_k_, tokens * group_) /
              num_experts_;
  }
  w.hbm_bytes = weight_bytes_ + experts + kv_bytes_per_token_ * (context + tokens) +
                windowed_kv_bytes_per_token_ * windowed_keys;
  return w;
}

StepWork StepWorkCounter::CountEach(const BatchShape& batch) const {
  return CountAs<false>(batch);
}

StepWork StepWorkCounter::CountSummed(const BatchShape& batch) const {
  return CountAs<true>(batch);
}

}  // namespace servesim
