// Speculative decoding's acceptance draws (EngineConfig::spec). Stateless:
// whether the draft for output position p of request r is accepted is a
// function of (seed, r, p) and r's rate alone, so every policy, replica
// count or batch order sees the same acceptances for the same request
// (common random numbers), and a request's rate never depends on when it
// was scheduled.
#pragma once

#include <bit>
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

namespace spec_detail {
// splitmix64's finaliser: a bijective mix of 64 bits.
inline uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// The hash of a draw: the request's key (seed and id mixed), then the
// output position.
inline uint64_t DrawHash(uint64_t key, int32_t position) {
  return Mix(key ^ (static_cast<uint64_t>(static_cast<uint32_t>(position)) +
                    0xd6e8feb86659fd93ULL));
}
}  // namespace spec_detail

// The same draws for one request as the speculative decode group makes
// them, every member every step: the request's part of the hash computed
// once, the comparison with the rate done on integers. A draw is uniform
// x * 2^-53 for the hash's top 53 bits x, and x * 2^-53 < rate exactly
// when x < ceil(rate * 2^53) (scaling by 2^53 is exact). Inline: the
// group's commit loop runs it.
struct SpecMemberDraws {
  uint64_t key = 0;
  uint64_t threshold = 0;  // accepted: the top 53 bits of a draw below it
  static SpecMemberDraws For(const SpecDecodeConfig& c, int64_t id, double rate);
  // As SpecAcceptedDrafts. Every draft is drawn, without a branch on the
  // outcomes (each is a function of its position alone): the count is the
  // run of leading accepts (drafts <= 64, the scenario's bound on k).
  int32_t Accepted(int32_t first, int32_t drafts) const {
    uint64_t accepts = 0;
    for (int32_t j = 0; j < drafts; ++j) {
      const uint64_t h = spec_detail::DrawHash(key, first + j);
      accepts |= static_cast<uint64_t>((h >> 11) < threshold) << j;
    }
    return static_cast<int32_t>(std::countr_one(accepts));
  }
};

}  // namespace servesim
