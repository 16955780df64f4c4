// The rules of engine_support.h.
#include "sim/engine/engine_support.h"

#include <string_view>

namespace servesim {
namespace {

// The KV offload rules name the key that is set: kv_offload if the tier
// is, else preemption (swap).
constexpr EngineRule kRules[] = {
    {"kv_offload",
     "KV offload and swap preemption are not modelled with /disaggregation: "
     "expected neither",
     [](const EngineFeatures& f) {
       return f.disaggregation && (f.kv_offload || f.swap_preemption);
     }},
    {"async_scheduling",
     "expected false with speculative_decoding (modelled with synchronous "
     "scheduling only)",
     [](const EngineFeatures& f) { return f.speculative_decoding && f.async_scheduling; }},
    {"preemption",
     "expected \"recompute\": \"swap\" needs /engine/kv_offload (its cpu_gib is "
     "the swap space)",
     [](const EngineFeatures& f) { return f.swap_preemption && !f.kv_offload; }},
    {"kv_offload",
     "KV offload and swap preemption are not modelled with "
     "/engine/speculative_decoding: expected neither",
     [](const EngineFeatures& f) {
       return f.speculative_decoding && (f.kv_offload || f.swap_preemption);
     }},
    // Pipeline parallelism: vLLM's batch queue over the stages with the
    // plain scheduler (hardware.pp).
    {"speculative_decoding",
     "expected none with hardware.pp > 1 (vLLM runs speculative decoding "
     "without pipeline parallelism)",
     [](const EngineFeatures& f) { return f.pipeline_parallel && f.speculative_decoding; }},
    {"kv_offload",
     "KV offload and swap preemption are not modelled with hardware.pp > 1: "
     "expected neither",
     [](const EngineFeatures& f) {
       return f.pipeline_parallel && (f.kv_offload || f.swap_preemption);
     }},
    {"kind",
     "expected \"vllm\" with hardware.pp > 1 (SGLang's pipeline parallelism is not "
     "modelled yet)",
     [](const EngineFeatures& f) { return f.sglang && f.pipeline_parallel; }},
    // SGLang's engine: what it does not model yet.
    {"kind",
     "expected \"vllm\" with /disaggregation (disaggregated prefill is modelled "
     "for vLLM only)",
     [](const EngineFeatures& f) { return f.sglang && f.disaggregation; }},
    {"kind",
     "expected \"vllm\" for a trace that names its blocks by hash (Mooncake's "
     "hash_ids): SGLang's radix cache over hashed blocks is not modelled yet",
     [](const EngineFeatures& f) { return f.sglang && f.hashed_trace; }},
    {"kind",
     "expected \"vllm\" for a model with sliding-window layers (SGLang pools their "
     "KV apart; not modelled yet)",
     [](const EngineFeatures& f) { return f.sglang && f.sliding_window; }},
};

}  // namespace

std::span<const EngineRule> EngineRules() { return kRules; }

std::optional<EngineRule> Unsupported(const EngineFeatures& f) {
  for (const EngineRule& r : kRules) {
    if (!r.breaks(f)) continue;
    EngineRule named = r;
    // A kv_offload rule broken by swap alone names preemption.
    if (std::string_view(r.key) == "kv_offload" && !f.kv_offload) named.key = "preemption";
    return named;
  }
  return std::nullopt;
}

}  // namespace servesim
