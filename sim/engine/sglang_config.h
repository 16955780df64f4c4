// Settings of SGLang's scheduler (version 0.5.23), in SGLang's own words:
// the server arguments (--max-total-tokens, --schedule-policy, ...) and the
// three environment variables that set the new-token ratio
// (SGLANG_INIT_NEW_TOKEN_RATIO, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR,
// SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS). Defaults are SGLang's.
#pragma once

#include <cstdint>

namespace servesim {

// Waiting-queue orders (SGLang's --schedule-policy). kRandom takes SGLang's
// shuffles from a hook (SglangScheduler::set_random_order); it never draws.
enum class SglangPolicy { kFcfs, kLof, kLpm, kDfsWeight, kRandom };

// SGLang's name for the order ("fcfs", "lof", "lpm", "dfs-weight", "random").
inline const char* SglangPolicyName(SglangPolicy p) {
  switch (p) {
    case SglangPolicy::kLof: return "lof";
    case SglangPolicy::kLpm: return "lpm";
    case SglangPolicy::kDfsWeight: return "dfs-weight";
    case SglangPolicy::kRandom: return "random";
    case SglangPolicy::kFcfs: break;
  }
  return "fcfs";
}

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
