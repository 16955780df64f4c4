// Speculative decoding in the scheduler: how many drafts a decode carries,
// and how many of them a step's verification accepts (the acceptance draws
// are spec_decode.h's; the decode group's members go through spec_group.cc).
#include <algorithm>

#include "sim/engine/scheduler.h"
#include "sim/engine/spec_decode.h"

namespace servesim {

int32_t Scheduler::DraftTokens(const Request& r, int32_t n) const {
  // Drafts exist after a step that sampled for it (the proposer runs on
  // every sequence that sampled); a decode verifies them with its token.
  // Never more than its remaining output can take: delivering the drafts
  // and the bonus token may not pass output_len.
  if (!r.spec_ready || n != 1 || r.num_output == 0) return 0;
  return std::max(0, std::min(config_.spec.num_speculative_tokens,
                              r.output_len - r.num_output - 1));
}

int32_t Scheduler::Verify(const ScheduledSeq& s, Request& r) {
  if (r.spec_rate < 0) {
    r.spec_rate = static_cast<float>(SpecAcceptanceRate(config_.spec, r.id));
  }
  // Draft j proposes output position num_output + j.
  const int32_t a =
      SpecAcceptedDrafts(config_.spec, r.id, r.spec_rate, r.num_output, s.spec);
  ++spec_stats_.drafts;
  spec_stats_.draft_tokens += s.spec;
  spec_stats_.accepted += a;
  // The rejected drafts' KV is dropped: their tokens are no longer
  // computed, and blocks only they filled go back to the pool.
  r.num_computed -= s.spec - a;
  const int32_t keep = blocks_.Blocks(r.num_computed);
  if (r.blocks.size() > keep) {
    rejected_blocks_.clear();
    r.blocks.MoveTail(r.blocks.size() - keep, &rejected_blocks_);
    kvm_.cache().Release(rejected_blocks_);
  }
  return a + 1;
}

}  // namespace servesim
