// Speculative decoding's acceptance draws (EngineConfig::spec). Stateless:
// whether the draft for output position p of request r is accepted is a
// function of (seed, r, p) and r's rate alone, so every policy, replica
// count or batch order sees the same acceptances for the same request
// (common random numbers), and a request's rate never depends on when it
// was scheduled.
#pragma once

#include <cstdint>

#include "sim/engine/engine_config.h"

namespace servesim {

// Speculative decoding counters of one replica (vLLM's spec decode metrics:
// drafts, draft tokens, accepted tokens).
struct SpecDecodeStats {
  int64_t drafts = 0;        // sequence-steps that verified >= 1 draft token
  int64_t draft_tokens = 0;  // draft tokens verified
  int64_t accepted = 0;      // of them, accepted
  double draft_s = 0;        // proposer time priced into the steps
  SpecDecodeStats& operator+=(const SpecDecodeStats& o) {
    drafts += o.drafts;
    draft_tokens += o.draft_tokens;
    accepted += o.accepted;
    draft_s += o.draft_s;
    return *this;
  }
};

// Request `id`'s per-draft-token acceptance rate: the constant, or a draw
// from Beta(beta_a, beta_b) on the request's own stream.
double SpecAcceptanceRate(const SpecDecodeConfig& c, int64_t id);

// Drafts accepted of `drafts` proposed for output positions first,
// first + 1, ...: each accepted with probability `rate`, stopping at the
// first rejection (a geometric count truncated at `drafts`).
int32_t SpecAcceptedDrafts(const SpecDecodeConfig& c, int64_t id, double rate,
                           int32_t first, int32_t drafts);

}  // namespace servesim
