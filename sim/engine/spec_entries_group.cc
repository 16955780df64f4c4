// The speculative decode group by entries (see spec_entries_group.h).
#include "sim/engine/spec_entries_group.h"

#include <algorithm>
#include <bit>
#include <iterator>

#include "sim/core/check.h"
#include "sim/engine/grouped_decode.h"
#include "sim/engine/scheduler.h"

namespace servesim {

SpecEntriesGroup::SpecEntriesGroup(const EngineConfig& config, const BlockMath& blocks,
                                   RequestTable* requests, std::vector<int64_t>* running,
                                   KvCache* kv, SpecDecodeStats* stats)
    : spec_(config.spec),
      buffered_(config.spec.num_speculative_tokens <= 31),
      blocks_(blocks),
      requests_(requests),
      running_(running),
      kv_(kv),
      stats_(stats) {
  SERVESIM_CHECK(kv->pool().counted() && !config.async_scheduling,
                 "the speculative decode group needs a counted pool and sync steps");
  next_.runs = config.verify_runs;
  next_.run_count.assign(static_cast<size_t>(spec_.num_speculative_tokens) + 2, 0);
  next_.run_context.assign(next_.run_count.size(), 0);
}

void SpecEntriesGroup::Absorb(std::vector<int64_t>* candidates) {
  RequestTable& reqs = *requests_;
  joining_.clear();
  joining_ids_.clear();
  for (const int64_t id : *candidates) {
    const Request& r = reqs[id];
    if (!SpecJoins(r, blocks_)) continue;
    // (The member's `rate` shows the rate from its first verify on.)
    const SpecMemberDraws draws = SpecMemberDraws::For(spec_, id, SpecDrawRate(spec_, r));
    joining_.push_back({r.run_key, id, draws, r.num_computed, r.num_output, r.output_len,
                        r.blocks.size(), 0, r.deliveries, r.spec_rate, r.max_delivered,
                        r.measured, false, (r.num_output >> 5) + 1,
                        buffered_ ? draws.RejectsFrom(r.num_output) : 0});
    joining_.back().n = Ask(joining_.back());
    joining_ids_.push_back(id);
  }
  candidates->clear();
  if (joining_.empty()) return;
  // Candidates come in batch order, which is running_'s (by key).
  SERVESIM_CHECK(EraseSubsequence(running_, joining_ids_),
                 "speculative decode group joins out of running order");
  for (const Member& m : joining_) measured_ += m.measured;
  const auto by_key = [](const Member& a, const Member& b) { return a.key < b.key; };
  if (members_.empty() || members_.back().key < joining_.front().key) {
    // Usually: they were admitted after every member.
    members_.insert(members_.end(), joining_.begin(), joining_.end());
    next_.Fit(members_.size());
    for (const Member& m : joining_) next_.Add(m, blocks_);
  } else {
    merged_.clear();
    std::merge(members_.begin(), members_.end(), joining_.begin(), joining_.end(),
               std::back_inserter(merged_), by_key);
    members_.swap(merged_);
    Recount();
  }
}

void SpecEntriesGroup::NextStep::Clear() {
  tokens = fresh_blocks = decodes = decode_context = draft_context = 0;
  finishing = draft_seqs = 0;
  num_verify = 0;
  std::fill(run_count.begin(), run_count.end(), 0);
  std::fill(run_context.begin(), run_context.end(), 0);
}

void SpecEntriesGroup::Recount() {
  next_.Clear();
  next_.Fit(members_.size());
  for (const Member& m : members_) next_.Add(m, blocks_);
}

bool SpecEntriesGroup::Prepare(int32_t cap, StepFitsFn fits) {
  if (members_.empty()) return false;
  SERVESIM_CHECK(!step_in_flight_, "speculative decode group scheduled before its commit");
  // A cap below k + 1 may cut drafts: every member asks again, capped.
  if (cap > 0 && cap <= spec_.num_speculative_tokens) {
    for (Member& m : members_) m.n = std::min(Ask(m), cap);
    Recount();
  }
  if (fits(next_.tokens, next_.fresh_blocks)) return true;
  LeaveAll();  // this step is short: it runs one by one
  return false;
}

GroupStepPart SpecEntriesGroup::Append(int32_t budget, const std::vector<ScheduledSeq>& batch,
                                       BatchShape* shape) {
  const NextStep& x = next_;
  const int32_t fresh = static_cast<int32_t>(x.fresh_blocks);
  SERVESIM_CHECK(x.tokens <= budget &&
                     (fresh <= 0 || kv_->Acquire(fresh, fresh, &group_blocks_)),
                 "speculative decode group step did not fit");
  step_in_flight_ = true;
  // The verify entries go where the batch would list them, by key: the
  // running pass's entries are in key order too, and usually all come
  // before them; those after the first verify entry's key are merged in.
  for (size_t n = 2; n < x.run_count.size(); ++n) {
    if (x.run_count[n] > 0) {
      shape->runs.push_back({static_cast<int32_t>(n), x.run_count[n], x.run_context[n]});
    }
  }
  std::vector<SeqWork>& seqs = shape->seqs;
  if (x.num_verify > 0) {
    const RequestTable& reqs = *requests_;
    size_t split = seqs.size();
    tail_keys_.clear();
    while (split > 0 && reqs[batch[split - 1].id].run_key > x.verify_keys.front()) {
      tail_keys_.push_back(reqs[batch[--split].id].run_key);
    }
    std::reverse(tail_keys_.begin(), tail_keys_.end());
    tail_.assign(seqs.begin() + static_cast<ptrdiff_t>(split), seqs.end());
    seqs.resize(split);
    size_t v = 0;
    for (size_t t = 0; t < tail_.size(); ++t) {
      const size_t upto = static_cast<size_t>(
          std::lower_bound(x.verify_keys.begin() + static_cast<ptrdiff_t>(v),
                           x.verify_keys.begin() + static_cast<ptrdiff_t>(x.num_verify),
                           tail_keys_[t]) -
          x.verify_keys.begin());
      seqs.insert(seqs.end(), x.verify.begin() + static_cast<ptrdiff_t>(v),
                  x.verify.begin() + static_cast<ptrdiff_t>(upto));
      seqs.push_back(tail_[t]);
      v = upto;
    }
    seqs.insert(seqs.end(), x.verify.begin() + static_cast<ptrdiff_t>(v),
                x.verify.begin() + static_cast<ptrdiff_t>(x.num_verify));
  }
  shape->decode_seqs += x.decodes;
  shape->decode_context += x.decode_context;
  return {.tokens = static_cast<int32_t>(x.tokens),
          .finishing = x.finishing,
          .draft_seqs = x.draft_seqs,
          .draft_context = x.draft_context};
}

void SpecEntriesGroup::Commit(SimTime now, SimTime last_commit, Recorder* recorder,
                              std::vector<int64_t>* finished, GroupHost* host) {
  // Every member's previous token came at the previous commit.
  if (measured_ > 0) recorder->RecordItlNanos(now - last_commit, measured_);
  last_group_commit_ = now;
  step_in_flight_ = false;
  int64_t rejected_blocks = 0, drafts = 0, draft_tokens = 0, accepted = 0;
  bool any_finished = false;
  next_.Clear();
  next_.Fit(members_.size());
  for (Member& m : members_) {
    // The step computed n tokens (blocks for them came with the group's).
    const int32_t d = m.n - 1;
    m.computed += m.n;
    m.blocks = std::max(m.blocks, blocks_.Blocks(m.computed));
    int32_t a = 0;
    // Draft j proposes output position num_output + j; the step uses
    // positions output .. output + a (the last: a rejected draft's or the
    // bonus token's).
    if (buffered_) {
      while (32 * m.next_word - m.output <= d) [[unlikely]] {
        m.rejects |= static_cast<uint64_t>(m.draws.Rejects(m.next_word))
                     << (32 * m.next_word - m.output);
        ++m.next_word;
      }
    }
    if (d > 0) {
      if (m.rate < 0) [[unlikely]] {  // its first verify (as Scheduler::Verify)
        m.rate = static_cast<float>(SpecAcceptanceRate(spec_, m.id));
      }
      a = buffered_ ? std::countr_zero(m.rejects | uint64_t{1} << d)
                    : m.draws.Accepted(m.output, d);
      ++drafts;
      draft_tokens += d;
      accepted += a;
      // The rejected drafts' KV is dropped, and blocks only they filled.
      m.computed -= d - a;
      const int32_t keep = blocks_.Blocks(m.computed);
      rejected_blocks += m.blocks - keep;
      m.blocks = keep;
    }
    if (buffered_) m.rejects >>= a + 1;
    m.output += a + 1;
    ++m.deliveries;
    m.max_delivered = static_cast<uint8_t>(std::max<int32_t>(m.max_delivered, a + 1));
    m.delivered = true;
    if (m.output == m.output_len) {
      m.n = 0;
      any_finished = true;
      continue;
    }
    m.n = Ask(m);  // its next step
    next_.Add(m, blocks_);
  }
  stats_->drafts += drafts;
  stats_->draft_tokens += draft_tokens;
  stats_->accepted += accepted;
  if (rejected_blocks > 0) {
    group_blocks_.MoveTail(static_cast<int32_t>(rejected_blocks), &scratch_blocks_);
    kv_->Release(scratch_blocks_);
    scratch_blocks_.clear();
  }
  if (!any_finished) return;
  // Finished members leave, by key (the order of their entries).
  std::erase_if(members_, [&](const Member& m) {
    if (m.output != m.output_len) return false;
    Rebuild(m);
    measured_ -= m.measured;
    host->FinishRequest(now, (*requests_)[m.id], finished);
    return true;
  });
}

void SpecEntriesGroup::Rebuild(const Member& m) {
  Request& r = (*requests_)[m.id];
  // Sync: a step is in flight only when the run ends before its commit;
  // its tokens are computed and its blocks held, as Add left them.
  const int32_t pending = step_in_flight_ ? m.n : 0;
  r.num_computed = m.computed + pending;
  r.num_output = m.output;
  r.in_flight = pending;
  r.deliveries = m.deliveries;
  r.max_delivered = m.max_delivered;
  r.spec_rate = m.rate;
  r.spec_ready = m.output < m.output_len;
  if (m.delivered) r.last_token = last_group_commit_;
  const int32_t owed = std::max(m.blocks, blocks_.Blocks(r.num_computed)) - r.blocks.size();
  SERVESIM_CHECK(owed >= 0 && owed <= group_blocks_.size(),
                 "speculative decode group owes request %lld %d blocks, holds %d",
                 static_cast<long long>(m.id), owed, group_blocks_.size());
  group_blocks_.MoveTail(owed, &r.blocks);
}

void SpecEntriesGroup::LeaveAll() {
  if (members_.empty()) return;
  std::vector<int64_t>& running = *running_;
  const size_t old = running.size();
  for (const Member& m : members_) {
    Rebuild(m);
    running.push_back(m.id);
  }
  members_.clear();
  measured_ = 0;
  next_.Clear();
  step_in_flight_ = false;  // (its members own its tokens now)
  const RequestTable& reqs = *requests_;
  std::inplace_merge(running.begin(), running.begin() + static_cast<ptrdiff_t>(old),
                     running.end(), [&](int64_t a, int64_t b) {
                       return reqs[a].run_key < reqs[b].run_key;
                     });
  SERVESIM_CHECK(group_blocks_.empty(),
                 "speculative decode group kept %d blocks nobody owns",
                 group_blocks_.size());
}

void SpecEntriesGroup::CheckInvariants(
    const std::function<void(const BlockList&)>& own) const {
  // After a commit: members hold the blocks of their known tokens, all but
  // the last computed, and their own lists what they held when they joined;
  // each asks for its next step, and next_ sums the asks.
  int64_t owed = 0, measured = 0;
  NextStep x;
  x.Fit(members_.size());
  x.runs = next_.runs;
  x.run_count.assign(next_.run_count.size(), 0);
  x.run_context.assign(next_.run_count.size(), 0);
  for (size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    const Request& r = (*requests_)[m.id];
    x.Add(m, blocks_);
    SERVESIM_CHECK(r.status == RequestStatus::kRunning && m.n == Ask(m) &&
                       m.output < m.output_len &&
                       m.computed == r.prompt_len + m.output - 1 &&
                       m.blocks == blocks_.Blocks(m.computed) &&
                       r.blocks.size() <= m.blocks &&
                       (i == 0 || members_[i - 1].key < m.key),
                   "speculative decode group member %lld in a bad state",
                   static_cast<long long>(m.id));
    own(r.blocks);
    owed += m.blocks - r.blocks.size();
    measured += m.measured;
  }
  own(group_blocks_);
  SERVESIM_CHECK(owed == group_blocks_.size() && measured == measured_,
                 "speculative decode group holds %d blocks, owes %lld",
                 group_blocks_.size(), static_cast<long long>(owed));
  SERVESIM_CHECK(x.tokens == next_.tokens && x.fresh_blocks == next_.fresh_blocks &&
                     x.decodes == next_.decodes && x.decode_context == next_.decode_context &&
                     x.num_verify == next_.num_verify &&
                     std::equal(x.verify_keys.begin(),
                                x.verify_keys.begin() + static_cast<ptrdiff_t>(x.num_verify),
                                next_.verify_keys.begin()) &&
                     x.run_count == next_.run_count && x.run_context == next_.run_context &&
                     x.finishing == next_.finishing &&
                     x.draft_seqs == next_.draft_seqs &&
                     x.draft_context == next_.draft_context,
                 "speculative decode group's next step (%lld tokens) is not its members' "
                 "asks (%lld)",
                 static_cast<long long>(next_.tokens), static_cast<long long>(x.tokens));
}

}  // namespace servesim
