// Settings of SGLang's scheduler (version 0.5.23), in SGLang's own words:
// the server arguments (--max-total-tokens, --schedule-policy, ...) and the
// three environment variables that set the new-token ratio
// (SGLANG_INIT_NEW_TOKEN_RATIO, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR,
// SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS). Defaults are SGLang's.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace servesim {

// Waiting-queue orders (SGLang's --schedule-policy). kRandom takes SGLang's
// shuffles from a hook (SglangScheduler::set_random_order); it never draws.
enum class SglangPolicy { kFcfs, kLof, kLpm, kDfsWeight, kRandom };

// The orders by SGLang's names: the one table for reading and printing them.
inline constexpr std::pair<SglangPolicy, std::string_view> kSglangPolicyNames[] = {
    {SglangPolicy::kFcfs, "fcfs"},
    {SglangPolicy::kLof, "lof"},
    {SglangPolicy::kLpm, "lpm"},
    {SglangPolicy::kDfsWeight, "dfs-weight"},
    {SglangPolicy::kRandom, "random"},
};

inline const char* SglangPolicyName(SglangPolicy p) {
  for (const auto& [policy, name] : kSglangPolicyNames) {
    if (policy == p) return name.data();
  }
  return "fcfs";
}

// The order SGLang calls `name`, or nullopt for one not modelled.
inline std::optional<SglangPolicy> SglangPolicyNamed(std::string_view name) {
  for (const auto& [policy, n] : kSglangPolicyNames) {
    if (n == name) return policy;
  }
  return std::nullopt;
}

// CLIP_MAX_NEW_TOKENS: admission never reserves more output than this per
// request.
inline constexpr int64_t kSglangClipMaxNewTokens = 4096;

struct SglangConfig {
  int64_t max_total_tokens = 0;     // KV pool, in tokens
  int32_t max_running_requests = 0;
  int64_t max_prefill_tokens = 16384;
  int64_t chunked_prefill_size = 8192;  // <= 0: chunking off
  int32_t page_size = 1;
  SglangPolicy schedule_policy = SglangPolicy::kFcfs;
  double schedule_conservativeness = 1.0;
  bool disable_overlap_schedule = false;  // false: the overlap loop
  bool disable_radix_cache = false;
  double init_new_token_ratio = 0.7;
  double min_new_token_ratio_factor = 0.14;
  int32_t new_token_ratio_decay_steps = 600;
};

}  // namespace servesim
