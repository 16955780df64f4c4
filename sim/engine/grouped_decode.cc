// The decode group's protocol with the scheduler (see grouped_decode.h).
#include "sim/engine/grouped_decode.h"

#include <algorithm>

#include "sim/core/check.h"
#include "sim/engine/block_hashing.h"

namespace servesim {

GroupedDecode::GroupedDecode(bool on, const EngineConfig& config,
                             const BlockMath& blocks, RequestTable* requests,
                             std::vector<int64_t>* running, KvCache* kv,
                             SpecDecodeStats* spec_stats)
    : on_(on),
      spec_(on && config.spec.on()
                ? MakeSpecGroup(config, blocks, requests, running, kv, spec_stats)
                : nullptr),
      finish_in_group_(on && !config.prefix_caching),
      async_(config.async_scheduling),
      blocks_(blocks),
      requests_(requests),
      running_(running),
      kv_(kv),
      group_(std::max(1, config.block_size)) {}

bool GroupedDecode::Prepare(int32_t cap, StepFitsFn fits) {
  if (spec_) return spec_->Prepare(cap, fits);
  bool whole = false;
  if (!group_.empty()) {
    // With prefix caching last steps are scheduled one by one (they finish
    // the request); without, members leave after their last step is
    // batched (Append).
    while (!finish_in_group_ && group_.Due()) {
      const DecodeGroup::Member m = group_.PopDue();
      Rebuild(m, group_.step());
      InsertRunning(m.id);
    }
    if (!group_.empty()) {
      whole = fits(group_.size(), group_.BlocksNeeded());
      if (!whole) LeaveAll();  // this step is short: run it one by one
    }
  }
  if (!whole && !finishing_.empty()) RebuildFinishing();
  return whole;
}

GroupedDecode::Part GroupedDecode::Append(int32_t budget,
                                          const std::vector<ScheduledSeq>& batch,
                                          BatchShape* shape) {
  if (spec_) return spec_->Append(budget, batch, shape);
  const int32_t members = group_.size();
  const int32_t fresh = group_.BlocksNeeded();
  SERVESIM_CHECK(members <= budget &&
                     (fresh <= 0 || kv_->Acquire(fresh, fresh, &group_blocks_)),
                 "decode group step did not fit");
  shape->decode_seqs += members;
  shape->decode_context += group_.context_sum();
  in_flight_.push_back({group_.step(), group_.measured()});
  int32_t finishing = 0;
  if (finish_in_group_) {
    // Members whose last step this is leave now (by admission key).
    const size_t before = finishing_.size();
    while (group_.Due()) finishing_.push_back(group_.PopDue());
    finishing = static_cast<int32_t>(finishing_.size() - before);
  }
  group_.Advance();
  return {.tokens = members, .finishing = finishing};
}

void GroupedDecode::Rebuild(const DecodeGroup::Member& m, int64_t until) {
  Request& r = (*requests_)[m.id];
  // Group steps it took part in, and of them those committed.
  const int64_t steps = until - m.joined;
  const int64_t done = std::max<int64_t>(0, commits_ - m.joined);
  const auto pending = static_cast<int32_t>(steps - done);
  r.num_computed = m.joined_context + static_cast<int32_t>(steps);
  r.in_flight += pending;
  if (async_) r.placeholders += pending;
  r.num_output += static_cast<int32_t>(done);
  if (done > 0) r.last_token = last_group_commit_;
  const int32_t owed = blocks_.Blocks(r.num_computed) - r.blocks.size();
  SERVESIM_CHECK(owed >= 0 && owed <= group_blocks_.size(),
                 "decode group owes request %lld %d blocks, holds %d",
                 static_cast<long long>(m.id), owed, group_blocks_.size());
  group_blocks_.MoveTail(owed, &r.blocks);
  if (pending > 0) {
    orphans_.push_back({m.id, std::max(m.joined, commits_), until});
  }
  // Prefix caching: the blocks its group steps filled are registered (all
  // privately: Join) as one by one they would have been, by Add's
  // scheduled known tokens (sync) or by the last delivery (async) -- either
  // way the tokens computed and no longer in flight. Until now they were
  // held by the group, where registration changes nothing.
  if (kv_->prefix_caching()) {
    const int32_t full = blocks_.Full(r.num_computed - r.in_flight);
    if (full > r.num_registered) {
      kv_->RegisterPrivate(&r.blocks, r.num_registered, full - r.num_registered);
      r.num_registered = full;
    }
  }
}

void GroupedDecode::InsertRunning(int64_t id) {
  const RequestTable& reqs = *requests_;
  const int64_t key = reqs[id].run_key;
  const auto at = std::lower_bound(
      running_->begin(), running_->end(), key,
      [&](int64_t a, int64_t k) { return reqs[a].run_key < k; });
  running_->insert(at, id);
}

void GroupedDecode::RebuildFinishing() {
  for (const DecodeGroup::Member& m : finishing_) {
    Rebuild(m, m.last_step + 1);
    InsertRunning(m.id);
  }
  finishing_.clear();
}

void GroupedDecode::LeaveAll() {
  RebuildFinishing();  // (their owed blocks leave the group first)
  std::vector<DecodeGroup::Member> all = group_.TakeAll();
  std::sort(all.begin(), all.end(),
            [](const DecodeGroup::Member& a, const DecodeGroup::Member& b) {
              return a.key < b.key;
            });
  std::vector<int64_t>& running = *running_;
  const size_t old = running.size();
  for (const DecodeGroup::Member& m : all) {
    Rebuild(m, group_.step());
    running.push_back(m.id);
  }
  const RequestTable& reqs = *requests_;
  std::inplace_merge(running.begin(), running.begin() + static_cast<ptrdiff_t>(old),
                     running.end(), [&](int64_t a, int64_t b) {
                       return reqs[a].run_key < reqs[b].run_key;
                     });
  SERVESIM_CHECK(group_blocks_.empty(), "decode group kept %d blocks nobody owns",
                 group_blocks_.size());
}

void GroupedDecode::Flush() {
  if (spec_) {
    spec_->LeaveAll();  // (candidates are still in running_)
    candidates_.clear();
    spec_candidates_.clear();
    return;
  }
  RebuildFinishing();
  if (!group_.empty()) LeaveAll();
}

void GroupedDecode::Join() {
  if (spec_) {
    // They join when this step commits (Committed). A step that ends up
    // empty (every entry unscheduled) never commits: its candidates, all
    // preempted, are dropped here by the next step's.
    spec_candidates_.swap(candidates_);
    candidates_.clear();
    return;
  }
  if (candidates_.empty()) return;
  RequestTable& reqs = *requests_;
  joining_.clear();
  for (const int64_t id : candidates_) {
    Request& r = reqs[id];
    // Its step sampled: from the next on it decodes one token a step
    // (context >= 1). One whose next step is its last stays out.
    const int64_t left = r.total_len() - 2 - r.num_computed;
    if (r.status != RequestStatus::kRunning || left < 1) continue;
    // Prefix caching: only a request whose blocks from now on are all
    // private (its own stream, never preempted) joins: nobody can hit
    // them, so which group block it ends up with, and registering them
    // only when it leaves (Rebuild), cannot change any result.
    if (kv_->prefix_caching() &&
        (r.preemptions != 0 || FirstPrivateBlock(r, blocks_.size()) > r.num_registered)) {
      continue;
    }
    SERVESIM_CHECK(r.stale == 0 && r.blocks.size() == blocks_.Blocks(r.num_computed),
                   "request %lld joins the decode group in a bad state (stale %d, "
                   "%d blocks for %d tokens)",
                   static_cast<long long>(r.id), r.stale, r.blocks.size(),
                   r.num_computed);
    // Its last step samples token output_len: at num_computed total - 2.
    const int64_t last = group_.step() + left;
    group_.Join({last, r.run_key, r.id, group_.step(), r.num_computed, r.measured});
    joining_.push_back(r.id);
  }
  candidates_.clear();
  if (joining_.empty()) return;
  // The batch lists running requests in running_'s order.
  SERVESIM_CHECK(EraseSubsequence(running_, joining_), "decode group joins out of running order");
}

bool GroupedDecode::Commit(SimTime now, Recorder* recorder,
                           std::vector<int64_t>* finished, GroupHost* host) {
  if (spec_) {
    spec_->Commit(now, last_commit_, recorder, finished, host);
    return false;  // its finishes were members, not in running_
  }
  const InFlight part = in_flight_.front();
  in_flight_.pop_front();
  // Every member of the part had its previous token from the previous
  // step (a group step, or the one-by-one step it joined in): one gap.
  if (part.measured > 0) recorder->RecordItlNanos(now - last_commit_, part.measured);
  commits_ = part.step + 1;
  last_group_commit_ = now;
  bool ran_out = false;
  if (!finishing_.empty() && finishing_.front().last_step == part.step) {
    // Members whose last step this was: every token of theirs is now
    // delivered (the part's weighted sample holds their last gap).
    size_t k = 0;
    for (; k < finishing_.size() && finishing_[k].last_step == part.step; ++k) {
      const DecodeGroup::Member& m = finishing_[k];
      Rebuild(m, m.last_step + 1);
      Request& r = (*requests_)[m.id];
      SERVESIM_CHECK(r.num_output == r.output_len && r.in_flight == 0,
                     "finishing member %lld has %d of %d tokens, %d in flight",
                     static_cast<long long>(m.id), r.num_output, r.output_len,
                     r.in_flight);
      host->FinishRequest(now, r, finished);
    }
    finishing_.erase(finishing_.begin(), finishing_.begin() + static_cast<ptrdiff_t>(k));
  }
  if (orphans_.empty()) return ran_out;
  // Former members: their token of this step, one by one (their gap is in
  // the weighted sample above). Their last only if they left after it was
  // batched (finish_in_group_) and were put back in running_ before it
  // committed; else last steps run one by one.
  for (const Orphan& o : orphans_) {
    if (o.first <= part.step && part.step < o.until) {
      if (host->DeliverOrphanToken(now, o.id, recorder, finished)) {
        SERVESIM_CHECK(finish_in_group_, "request %lld finished in a group step",
                       static_cast<long long>(o.id));
        ran_out = true;
      }
    }
  }
  std::erase_if(orphans_, [&](const Orphan& o) { return o.until <= commits_; });
  return ran_out;
}

void GroupedDecode::CheckInvariants(
    const std::function<void(const BlockList&)>& own) const {
  if (spec_) {
    spec_->CheckInvariants(own);
    return;
  }
  // Members hold the blocks they had when they joined; the group holds the
  // rest of what their contexts need now (finishing ones: after their last
  // step).
  int64_t owed = 0;
  for (const DecodeGroup::Member& m : finishing_) {
    const Request& r = (*requests_)[m.id];
    const int64_t context = m.joined_context + (m.last_step + 1 - m.joined);
    SERVESIM_CHECK(r.status == RequestStatus::kRunning &&
                       r.num_computed == m.joined_context &&
                       m.last_step < group_.step() && context <= r.max_cached_tokens(),
                   "finishing member %lld in a bad state", static_cast<long long>(m.id));
    own(r.blocks);
    owed += blocks_.Blocks(static_cast<int32_t>(context)) -
            static_cast<int64_t>(r.blocks.size());
  }
  for (const DecodeGroup::Member& m : group_.members()) {
    const Request& r = (*requests_)[m.id];
    const int64_t context = m.joined_context + (group_.step() - m.joined);
    SERVESIM_CHECK(r.status == RequestStatus::kRunning &&
                       r.num_computed == m.joined_context &&
                       context <= r.max_cached_tokens() && m.last_step >= group_.step(),
                   "decode group member %lld in a bad state", static_cast<long long>(m.id));
    own(r.blocks);
    owed += blocks_.Blocks(static_cast<int32_t>(context)) -
            static_cast<int64_t>(r.blocks.size());
  }
  own(group_blocks_);
  SERVESIM_CHECK(owed == static_cast<int64_t>(group_blocks_.size()),
                 "decode group holds %d blocks, owes %lld", group_blocks_.size(),
                 static_cast<long long>(owed));
}

}  // namespace servesim
