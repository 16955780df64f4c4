// The speculative decode group that lists its verifying members as the
// batch's entries, in order (SpecGroup's mode for cost models that price
// each sequence: see spec_group.h): running requests in steady speculative
// decode kept in one compact array, scheduled and committed in one tight
// loop per step -- no batch entry, Request access or ITL sample per member.
//
// A step delivers 1 + the accepted drafts, so contexts do not grow in step
// (DecodeGroup's one-token model): each member carries its own counters and
// every step applies the one-by-one rules to them (Scheduler::RunningAsk,
// DraftTokens, Add, Verify, Deliver):
//   ask:      d = min(k, output_len - num_output - 1) drafts, n = 1 + d
//             tokens (a long-prefill cap cuts drafts), blocks for
//             num_computed + n;
//   commit:   a accepted drafts (stateless draws: their order is free), the
//             rejected drafts' KV dropped (num_computed -= d - a, blocks
//             past it freed), a + 1 tokens as one delivery; finished at
//             output_len.
// One pass over the members a step: the commit delivers each member's
// tokens and adds its next ask to the next step (NextStep: totals and the
// verify entries), which Prepare and Append then use whole; a cap that
// cuts drafts makes Prepare ask again member by member.
// Members are kept by admission key, the order their entries would have in
// the batch: a verifying member's entry (n > 1 counts as prompt work, whose
// cost some cost models sum in floating point) is merged into the shape at
// that place; plain decodes (d = 0) go to the shape's aggregate. With a
// cost model that prices runs exactly (EngineConfig::verify_runs), the
// verifying members go to the shape as one run per token count instead
// (count and summed context), in no order.
// ITL: synchronous steps commit before the next is scheduled and a member is
// in every step while it is one, so each member's previous token came at the
// previous commit: one weighted sample per step.
// Joining: a request whose step sampled a token (not its last) joins when
// that step commits (its counters are then exact; finished ones are passed
// over before their requests may be retired).
// Leaving: all at once, rebuilt exactly, before a step that could not cover
// every member (it then runs one by one) and at the end of a run; one by one
// when they finish in a commit. A run that stops early (limits.max_queued)
// ends with the group's step in flight: its tokens and blocks are then
// rebuilt as scheduled, not committed (as Add left them one by one).
// Blocks: without prefix caching the pool is counted (ids do not exist), so
// the blocks members gained since joining are one count the group holds;
// a leaving member takes what it is owed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/cost/cost_model.h"
#include "sim/engine/block_math.h"
#include "sim/engine/engine_config.h"
#include "sim/engine/request.h"
#include "sim/engine/spec_decode.h"
#include "sim/engine/spec_group.h"
#include "sim/kv/kv_cache.h"
#include "sim/metrics/recorder.h"

namespace servesim {

class SpecEntriesGroup final : public SpecGroup {
 public:
  SpecEntriesGroup(const EngineConfig& config, const BlockMath& blocks,
                   RequestTable* requests, std::vector<int64_t>* running, KvCache* kv,
                   SpecDecodeStats* stats);

  // SpecGroup:
  int32_t size() const override { return static_cast<int32_t>(members_.size()); }
  void Absorb(std::vector<int64_t>* candidates) override;
  bool Prepare(int32_t cap, StepFitsFn fits) override;
  GroupStepPart Append(int32_t budget, const std::vector<ScheduledSeq>& batch,
                       BatchShape* shape) override;
  void Commit(SimTime now, SimTime last_commit, Recorder* recorder,
              std::vector<int64_t>* finished, GroupHost* host) override;
  void LeaveAll() override;
  void CheckInvariants(const std::function<void(const BlockList&)>& own) const override;

 private:
  struct Member {
    int64_t key;  // admission order (run_key)
    int64_t id;
    SpecMemberDraws draws;  // from its rate, drawn when it joins
    // Its counters before the next step (the step in flight adds n).
    int32_t computed, output, output_len;
    int32_t blocks;  // held in all: its own list's, then owed by the group
    int32_t n;       // tokens of its next step (its ask, or the cap's cut)
    int32_t deliveries;
    float rate;  // acceptance rate, -1 until drawn (as Request::spec_rate)
    uint8_t max_delivered;
    bool measured;
    bool delivered;  // a group step delivered to it (last_token is then
                     // the latest group commit)
    // With k <= 31: bit i set if a draft for position output + i would be
    // rejected (SpecMemberDraws::Rejects), up to position 32 * next_word.
    int32_t next_word;
    uint64_t rejects;
  };
  // What the members' next step adds to the plan, in key order.
  // (Add runs for every member every step: inline, and its entries are
  // written into room made once a step, not pushed.)
  struct NextStep {
    int64_t tokens = 0, fresh_blocks = 0;
    int64_t decodes = 0, decode_context = 0;  // n = 1: the shape's aggregate
    // n > 1: the shape's entries and their members' keys, the first
    // num_verify of each.
    std::vector<SeqWork> verify;
    std::vector<int64_t> verify_keys;
    size_t num_verify = 0;
    // verify_runs: instead, by n (2 .. k + 1), members and summed contexts.
    bool runs = false;
    std::vector<int64_t> run_count, run_context;
    int32_t finishing = 0;
    int32_t draft_seqs = 0;
    int64_t draft_context = 0;
    void Clear();
    // Room for `members` entries in all.
    void Fit(size_t members) {
      if (verify.size() < members) {
        verify.resize(members);
        verify_keys.resize(members);
      }
    }
    void Add(const Member& m, const BlockMath& blocks) {
      const int32_t c = m.computed, n = m.n;
      tokens += n;
      fresh_blocks += std::max(0, blocks.Blocks(c + n) - m.blocks);
      // Drafts are n - 1 (a cap cuts them); with none, the token it
      // samples may be its last (no drafts for after it).
      if (n == 1) {
        ++decodes;
        decode_context += c;
        if (m.output + 1 == m.output_len) {
          ++finishing;
          return;
        }
      } else if (runs) {
        ++run_count[n];
        run_context[n] += c;
      } else {
        verify[num_verify] = {n, c, true};
        verify_keys[num_verify++] = m.key;
      }
      ++draft_seqs;
      draft_context += c + 1;  // what it drafts from: its context, drafts aside
    }
  };
  // Tokens a member asks for (RunningAsk with DraftTokens), no cap.
  int32_t Ask(const Member& m) const {
    return 1 + std::max(0, std::min(spec_.num_speculative_tokens, m.output_len - m.output - 1));
  }
  void Recount();  // next_ anew from every member's n
  // Writes a member's counters back into its Request, with the blocks the
  // group owes it (with the step in flight: its n tokens too).
  void Rebuild(const Member& m);

  SpecDecodeConfig spec_;
  bool buffered_;  // k <= 31: draws read from each member's bit buffer
  BlockMath blocks_;
  RequestTable* requests_;
  std::vector<int64_t>* running_;
  KvCache* kv_;
  SpecDecodeStats* stats_;
  std::vector<Member> members_;  // by key
  int32_t measured_ = 0;         // members whose ITL counts
  NextStep next_;
  BlockList group_blocks_;       // counted: what the members gained
  BlockList scratch_blocks_;
  SimTime last_group_commit_ = -1;
  bool step_in_flight_ = false;  // Append ran, Commit not yet
  // Scratch: joiners; the running pass's entries after the first verify
  // entry's key and their keys (Append's merge).
  std::vector<Member> joining_;
  std::vector<int64_t> joining_ids_;
  std::vector<SeqWork> tail_;
  std::vector<int64_t> tail_keys_;
  std::vector<Member> merged_;
};

}  // namespace servesim
