// The decode group under speculative decoding (see spec_group.h).
#include "sim/engine/spec_group.h"

#include <algorithm>
#include <iterator>

#include "sim/core/check.h"
#include "sim/engine/grouped_decode.h"
#include "sim/engine/scheduler.h"

namespace servesim {

SpecDecodeGroup::SpecDecodeGroup(const EngineConfig& config, const BlockMath& blocks,
                                 RequestTable* requests, std::vector<int64_t>* running,
                                 KvCache* kv, SpecDecodeStats* stats)
    : spec_(config.spec),
      blocks_(blocks),
      requests_(requests),
      running_(running),
      kv_(kv),
      stats_(stats) {
  SERVESIM_CHECK(kv->pool().counted() && !config.async_scheduling,
                 "the speculative decode group needs a counted pool and sync steps");
}

void SpecDecodeGroup::Absorb(std::vector<int64_t>* candidates) {
  RequestTable& reqs = *requests_;
  joining_.clear();
  joining_ids_.clear();
  for (const int64_t id : *candidates) {
    const Request& r = reqs[id];
    // Its step committed: it drafts from now on (spec_ready), every token
    // it computed is known (sync: nothing in flight), one is left to feed.
    if (r.status != RequestStatus::kRunning || !r.spec_ready || r.num_output == 0 ||
        r.num_output >= r.output_len) {
      continue;
    }
    SERVESIM_CHECK(r.in_flight == 0 && r.stale == 0 && r.placeholders == 0 &&
                       r.num_computed == r.known_tokens() - 1 &&
                       r.blocks.size() == blocks_.Blocks(r.num_computed),
                   "request %lld joins the speculative decode group in a bad state",
                   static_cast<long long>(id));
    const SpecMemberDraws draws =
        r.spec_rate < 0 ? SpecMemberDraws{} : SpecMemberDraws::For(spec_, id, r.spec_rate);
    joining_.push_back({r.run_key, id, draws, r.num_computed, r.num_output, r.output_len,
                        r.blocks.size(), 0, r.deliveries, r.spec_rate, r.max_delivered,
                        r.measured, false});
    joining_ids_.push_back(id);
  }
  candidates->clear();
  if (joining_.empty()) return;
  // Candidates come in batch order, which is running_'s (by key).
  size_t next = 0;
  std::erase_if(*running_, [&](int64_t id) {
    if (next == joining_ids_.size() || joining_ids_[next] != id) return false;
    ++next;
    return true;
  });
  SERVESIM_CHECK(next == joining_ids_.size(),
                 "speculative decode group joins out of running order");
  for (const Member& m : joining_) measured_ += m.measured;
  const auto by_key = [](const Member& a, const Member& b) { return a.key < b.key; };
  if (members_.empty() || members_.back().key < joining_.front().key) {
    members_.insert(members_.end(), joining_.begin(), joining_.end());
  } else {
    merged_.clear();
    std::merge(members_.begin(), members_.end(), joining_.begin(), joining_.end(),
               std::back_inserter(merged_), by_key);
    members_.swap(merged_);
  }
}

bool SpecDecodeGroup::Prepare(int32_t cap,
                              const std::function<bool(int64_t, int64_t)>& fits) {
  if (members_.empty()) return false;
  // Each member's ask (RunningAsk with DraftTokens), and the blocks it needs.
  const int32_t k = spec_.num_speculative_tokens;
  int64_t tokens = 0, fresh = 0;
  for (Member& m : members_) {
    int32_t n = 1 + std::max(0, std::min(k, m.output_len - m.output - 1));
    if (cap > 0) n = std::min(n, cap);
    m.n = n;
    tokens += n;
    fresh += std::max(0, blocks_.Blocks(m.computed + n) - m.blocks);
  }
  fresh_ = fresh;
  if (fits(tokens, fresh)) return true;
  for (Member& m : members_) m.n = 0;  // nothing in flight
  LeaveAll();  // this step is short: it runs one by one
  return false;
}

GroupStepPart SpecDecodeGroup::Append(int32_t budget, const std::vector<ScheduledSeq>& batch,
                                      BatchShape* shape) {
  SERVESIM_CHECK(fresh_ <= 0 || kv_->Acquire(static_cast<int32_t>(fresh_),
                                              static_cast<int32_t>(fresh_), &group_blocks_),
                 "speculative decode group step did not fit its blocks");
  // The verifying members' entries go where the batch would list them:
  // after the running pass's entries of lower keys (batch order is key
  // order), usually all of them; those of higher keys wait in tail_.
  std::vector<SeqWork>& seqs = shape->seqs;
  const RequestTable& reqs = *requests_;
  size_t split = seqs.size();
  tail_keys_.clear();
  while (split > 0 && reqs[batch[split - 1].id].run_key > members_.front().key) {
    tail_keys_.push_back(reqs[batch[--split].id].run_key);
  }
  std::reverse(tail_keys_.begin(), tail_keys_.end());
  tail_.assign(seqs.begin() + static_cast<ptrdiff_t>(split), seqs.end());
  seqs.resize(split);
  size_t t = 0;
  GroupStepPart part;
  int64_t decodes = 0, decode_context = 0;
  for (Member& m : members_) {
    const int32_t c = m.computed, n = m.n;
    m.computed = c + n;
    m.blocks = std::max(m.blocks, blocks_.Blocks(c + n));
    part.tokens += n;
    // Drafts are n - 1 (a cap cuts them); with none, the token it samples
    // may be its last.
    if (n == 1) {
      ++decodes;
      decode_context += c;
      if (m.output + 1 == m.output_len) {
        ++part.finishing;
        continue;
      }
    } else {
      while (t < tail_.size() && tail_keys_[t] < m.key) {
        seqs.push_back(tail_[t++]);
      }
      seqs.push_back({n, c, true});
    }
    ++part.draft_seqs;
    part.draft_context += c + 1;  // what it drafts from: its context, drafts aside
  }
  seqs.insert(seqs.end(), tail_.begin() + static_cast<ptrdiff_t>(t), tail_.end());
  SERVESIM_CHECK(part.tokens <= budget, "speculative decode group step did not fit");
  shape->decode_seqs += decodes;
  shape->decode_context += decode_context;
  return part;
}

void SpecDecodeGroup::Commit(SimTime now, SimTime last_commit, Recorder* recorder,
                             std::vector<int64_t>* finished, GroupHost* host) {
  // Every member's previous token came at the previous commit.
  if (measured_ > 0) recorder->RecordItlNanos(now - last_commit, measured_);
  last_group_commit_ = now;
  int64_t rejected_blocks = 0, drafts = 0, draft_tokens = 0, accepted = 0;
  bool any_finished = false;
  for (Member& m : members_) {
    const int32_t d = m.n - 1;
    int32_t a = 0;
    if (d > 0) {
      if (m.rate < 0) [[unlikely]] {  // its first verify (as Scheduler::Verify)
        m.rate = static_cast<float>(SpecAcceptanceRate(spec_, m.id));
        m.draws = SpecMemberDraws::For(spec_, m.id, m.rate);
      }
      // Draft j proposes output position num_output + j.
      a = m.draws.Accepted(m.output, d);
      ++drafts;
      draft_tokens += d;
      accepted += a;
      // The rejected drafts' KV is dropped, and blocks only they filled.
      m.computed -= d - a;
      const int32_t keep = blocks_.Blocks(m.computed);
      rejected_blocks += m.blocks - keep;
      m.blocks = keep;
    }
    m.n = 0;
    m.output += a + 1;
    ++m.deliveries;
    m.max_delivered = static_cast<uint8_t>(std::max<int32_t>(m.max_delivered, a + 1));
    m.delivered = true;
    any_finished |= m.output == m.output_len;
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

void SpecDecodeGroup::Rebuild(const Member& m) {
  Request& r = (*requests_)[m.id];
  r.num_computed = m.computed;
  r.num_output = m.output;
  r.in_flight = m.n;
  r.deliveries = m.deliveries;
  r.max_delivered = m.max_delivered;
  r.spec_rate = m.rate;
  r.spec_ready = m.output < m.output_len;
  if (m.delivered) r.last_token = last_group_commit_;
  const int32_t owed = m.blocks - r.blocks.size();
  SERVESIM_CHECK(owed >= 0 && owed <= group_blocks_.size(),
                 "speculative decode group owes request %lld %d blocks, holds %d",
                 static_cast<long long>(m.id), owed, group_blocks_.size());
  group_blocks_.MoveTail(owed, &r.blocks);
}

void SpecDecodeGroup::LeaveAll() {
  if (members_.empty()) return;
  std::vector<int64_t>& running = *running_;
  const size_t old = running.size();
  for (const Member& m : members_) {
    Rebuild(m);
    running.push_back(m.id);
  }
  members_.clear();
  measured_ = 0;
  const RequestTable& reqs = *requests_;
  std::inplace_merge(running.begin(), running.begin() + static_cast<ptrdiff_t>(old),
                     running.end(), [&](int64_t a, int64_t b) {
                       return reqs[a].run_key < reqs[b].run_key;
                     });
  SERVESIM_CHECK(group_blocks_.empty(),
                 "speculative decode group kept %d blocks nobody owns",
                 group_blocks_.size());
}

void SpecDecodeGroup::CheckInvariants(
    const std::function<void(const BlockList&)>& own) const {
  // After a commit: members hold the blocks of their known tokens, all but
  // the last computed, and their own lists what they held when they joined.
  int64_t owed = 0, measured = 0;
  for (size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    const Request& r = (*requests_)[m.id];
    SERVESIM_CHECK(r.status == RequestStatus::kRunning && m.n == 0 &&
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
}

}  // namespace servesim
