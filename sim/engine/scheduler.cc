// The scheduling mechanism (see scheduler.h for the rules). A request's
// blocks, prefix hits and CPU tier are the KV manager's (kv_manager.cc),
// the decode group's protocol is in grouped_decode.cc, speculative
// decoding's drafts and verification in scheduler_spec.cc, the invariant
// checks in scheduler_checks.cc.
#include "sim/engine/scheduler.h"

#include <algorithm>
#include <climits>

#include "sim/core/check.h"
#include "sim/engine/block_hashing.h"
#include "sim/kv/prefix_cache.h"

namespace servesim {

bool UsesDecodeGroup(const EngineConfig& config) {
  // Off for the prefill role (it holds finished requests' blocks for their
  // transfer); on for the decode role, whose running requests decode as
  // any others once admitted (tests/fuzz/reference_equivalence_test.cc
  // draws disaggregated deployments). Off with
  // the CPU tier: not proven equivalent there (swap needs the victim's own
  // block count, and evictions are logged by hash). With prefix caching
  // only requests whose blocks are private join (GroupedDecode::Join).
  // Speculative decoding's mode (SpecGroup) holds its members' blocks
  // as a count: without prefix caching (a counted pool), sync steps only.
  return config.decode_group && !config.reference_engine &&
         !config.hold_kv_after_finish &&
         config.cpu_blocks == 0 &&
         (!config.spec.on() || (!config.prefix_caching && !config.async_scheduling));
}

Scheduler::Scheduler(const EngineConfig& config,
                     std::unique_ptr<SchedulerPolicy> policy,
                     RequestTable* requests)
    : config_(config),
      policy_(std::move(policy)),
      orders_waiting_(policy_->orders_waiting()),
      requests_(requests),
      // Of all blocks, the null block included (vLLM: watermark * num_blocks).
      watermark_blocks_(static_cast<int32_t>(config.watermark * config.num_gpu_blocks)),
      blocks_(config.block_size),
      kvm_(config, std::max(0, config.num_gpu_blocks - kReservedBlocks)),
      // The reference engine scans the queue with PickNext.
      waiting_(policy_.get(), requests,
               policy_->has_waiting_key() && !config.reference_engine),
      group_(UsesDecodeGroup(config), config_, blocks_, requests, &running_,
             &kvm_.cache(), &spec_stats_) {}

const char* Scheduler::CheckServable(const Request& r) const {
  if (blocks_.Blocks(r.max_cached_tokens()) > kvm_.cache().num_blocks()) {
    return "needs more KV blocks than the whole cache holds";
  }
  // Without chunking a prompt (and, after preemption, prompt + output) must
  // fit in one step's token budget.
  if (!config_.chunked_prefill &&
      r.max_cached_tokens() > config_.max_num_batched_tokens) {
    return "longer than max_num_batched_tokens with chunked prefill off";
  }
  return nullptr;
}

void Scheduler::AddWaiting(int64_t id) {
  (*requests_)[id].status = RequestStatus::kWaiting;
  waiting_.PushBack(id);
}

int32_t Scheduler::Admit(Request& r, int32_t budget, int32_t cap, StepPlan* plan) {
  const KvLookup l = kvm_.Find(r);
  // Disaggregated decode: the prompt's KV came from a prefill instance;
  // only its last token is computed here (the first admission only).
  const int32_t external =
      config_.remote_prefill && r.preemptions == 0 && r.num_output == 0
          ? std::max(0, r.prompt_len - 1 - l.cached)
          : 0;
  int32_t left = r.known_tokens() - l.cached - external;
  if (cap > 0) left = std::min(left, cap);
  if (!config_.chunked_prefill && left > budget) return 0;
  const int32_t n = std::min(left, budget);
  const int32_t fresh = blocks_.Blocks(l.cached + external + n) - l.hits;
  const int32_t watermark = num_running() == 0 ? 0 : watermark_blocks_;
  const int32_t reserve =
      watermark + (config_.reserve_full_prompt ? blocks_.Blocks(r.known_tokens()) - l.hits
                                               : fresh);
  if (!kvm_.Allocate(r, l, fresh, reserve)) return 0;
  r.num_computed = l.cached + external;
  kvm_.Loaded(r, l, &plan->transfers);
  const int32_t prefix_hit = (l.hits + l.cpu_hits) * config_.block_size;
  if (r.cached_tokens < 0) {
    r.cached_tokens = l.cached;
    r.cpu_cached_tokens = l.cpu_hits * config_.block_size;
  } else {
    resume_cached_tokens_ += prefix_hit;
  }
  return n;
}

void Scheduler::Preempt(size_t running_index, StepPlan* plan) {
  const int64_t id = running_[running_index];
  Request& r = (*requests_)[id];
  kvm_.Preempt(r, &plan->transfers);
  r.num_computed = 0;
  // Output of steps still in flight arrives later and is delivered, but no
  // longer counts against the reset counters.
  r.stale = r.in_flight;
  r.placeholders = 0;
  r.spec_ready = false;  // its drafts are dropped with its KV
  ++r.preemptions;
  plan->preempted.push_back(id);
  r.status = RequestStatus::kWaiting;
  running_.erase(running_.begin() + static_cast<ptrdiff_t>(running_index));
  waiting_.PushFront(id);
}

int32_t Scheduler::Unschedule(int64_t id, StepPlan* plan) {
  std::vector<ScheduledSeq>& batch = plan->batch;
  for (size_t k = batch.size(); k-- > 0;) {
    if (batch[k].id != id) continue;
    const int32_t n = batch[k].new_tokens;
    plan->tokens -= n;
    plan->finishing -= batch[k].last;
    if (batch[k].samples && !batch[k].last) {
      --plan->draft_seqs;
      plan->draft_context -= plan->shape.seqs[k].context_tokens + n - batch[k].spec;
    }
    Request& r = (*requests_)[id];
    // Undo Add's counters that Preempt does not reset: the tokens are no
    // longer in flight (Preempt turns what still is into stale output).
    r.in_flight -= n;
    r.num_computed -= n;  // (Preempt resets it; a swap keeps what is left)
    batch.erase(batch.begin() + static_cast<ptrdiff_t>(k));
    plan->shape.seqs.erase(plan->shape.seqs.begin() + static_cast<ptrdiff_t>(k));
    return n;
  }
  return 0;
}

void Scheduler::Add(SimTime now, Request& r, int32_t n, StepPlan* plan, int32_t spec) {
  // Blocks become cacheable as soon as their tokens are scheduled, up to
  // the tokens known (never a placeholder's).
  if (kvm_.prefix_caching()) {
    const int32_t upto = std::min(r.num_computed + n, r.known_tokens());
    if (blocks_.Full(upto) > r.num_registered) kvm_.RegisterFullBlocks(r, upto);
  }
  const int32_t context = r.num_computed;
  r.num_computed += n;
  r.in_flight += n;
  const bool samples = r.num_computed >= r.known_tokens() + r.placeholders;
  if (samples && config_.async_scheduling) ++r.placeholders;
  // The token sampled is the num_output + (tokens in flight before it) + 1st;
  // a request is never readmitted with stale output in flight.
  const bool last = samples && r.num_output + std::max(r.placeholders, 1) == r.output_len;
  plan->batch.push_back({r.id, n, samples, last, spec});
  plan->tokens += n;
  plan->finishing += last;
  if (samples && !last) {
    group_.Candidate(r.id);
    // Drafts for its next step come from what the target computed, drafts aside.
    ++plan->draft_seqs;
    plan->draft_context += context + n - spec;
  }
  plan->shape.seqs.push_back({n, context, samples});
  if (r.first_scheduled < 0) r.first_scheduled = now;
}

void Scheduler::Schedule(SimTime now, StepPlan* plan) {
  plan->batch.clear();
  plan->shape.seqs.clear();
  plan->shape.runs.clear();
  plan->shape.decode_seqs = 0;
  plan->shape.decode_context = 0;
  plan->preempted.clear();
  plan->transfers = TransferCounts{};
  plan->admitted = 0;
  plan->cached_tokens = 0;
  plan->tokens = 0;
  plan->finishing = 0;
  plan->group_finishing = 0;
  plan->draft_seqs = 0;
  plan->draft_context = 0;
  finished_unreported_ = false;
  int32_t budget = config_.max_num_batched_tokens;
  // A long prompt may not take the whole budget while others are waiting.
  const int32_t cap = config_.long_prefill_token_threshold > 0 &&
                              waiting_.size() + num_running() > 1
                          ? config_.long_prefill_token_threshold
                          : 0;
  // The members are scheduled whole after the running requests: where they
  // stand among them cannot matter, as nobody's tokens or blocks run short.
  const bool group_step =
      group_.has_requests() && group_.Prepare(cap, [&](int64_t tokens, int64_t blocks) {
        return StepFits(cap, tokens, blocks);
      });
  decode_slots_ = config_.pipeline_decode_balance ? DecodeCap() : -1;
  budget = RunningPass(now, budget, cap, group_step, plan);
  int32_t group_tokens = 0;  // its entry is added last
  if (group_step) {
    const GroupedDecode::Part part = group_.Append(budget, plan->batch, &plan->shape);
    group_tokens = part.tokens;
    plan->tokens += part.tokens;
    plan->group_finishing = part.finishing;
    plan->finishing += part.finishing;
    plan->draft_seqs += part.draft_seqs;
    plan->draft_context += part.draft_context;
    budget -= part.tokens;
  }
  if (plan->preempted.empty()) budget = WaitingPass(now, budget, cap, plan);
  // The group's entry goes last (Commit finds it there); its place among
  // the others changes nothing: its members are none of theirs.
  if (group_step) plan->batch.push_back({kGroupEntry, group_tokens, true, false});
  group_.Join();
  transfers_ += plan->transfers;
}

int32_t Scheduler::DecodeCap() const {
  // Requests past their first token decode; those in flight count too
  // (they join a later batch).
  int32_t decoding = 0;
  for (int64_t id : running_) decoding += (*requests_)[id].num_output > 0;
  const int32_t stages = std::max(1, config_.pipeline_stages);
  return (decoding + stages - 1) / stages;
}

int32_t Scheduler::RunningAsk(const Request& r, int32_t cap, int32_t* drafts) const {
  *drafts = 0;
  // Async: the step in flight already samples its last token.
  if (r.placeholders > 0 && r.num_computed + 2 - r.placeholders >= r.total_len()) {
    return 0;
  }
  int32_t n = r.known_tokens() + r.placeholders - r.num_computed;
  // Speculative decoding: k draft tokens ride with the decode token and
  // count against the budget (vLLM's num_scheduled_tokens); a short
  // budget drops the last drafts.
  if (r.spec_ready) *drafts = DraftTokens(r, n);
  n += *drafts;
  if (cap > 0) n = std::min(n, cap);
  return n;
}

bool Scheduler::StepFits(int32_t cap, int64_t tokens, int64_t blocks) const {
  // What the running pass will ask for, without budget limits.
  const RequestTable& reqs = *requests_;
  for (int64_t id : running_) {
    const Request& r = reqs[id];
    int32_t drafts;
    const int32_t n = RunningAsk(r, cap, &drafts);
    if (n <= 0) continue;
    tokens += n;
    blocks += std::max<int64_t>(
        0, blocks_.Blocks(r.num_computed + n) - static_cast<int64_t>(r.blocks.size()));
  }
  return tokens <= config_.max_num_batched_tokens && blocks <= kvm_.cache().num_free();
}

int32_t Scheduler::RunningPass(SimTime now, int32_t budget, int32_t cap,
                               bool group_step, StepPlan* plan) {
  RequestTable& reqs = *requests_;
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request& r = reqs[running_[i]];
    int32_t drafts;
    const int32_t n = std::min(RunningAsk(r, cap, &drafts), budget);
    // pipeline_decode_balance: this batch has its share of decodes.
    const bool decode = decode_slots_ >= 0 && r.num_output > 0;
    if (n <= 0 || (decode && decode_slots_ == 0)) {
      ++i;
      continue;
    }
    bool self_preempted = false;
    while (!kvm_.EnsureBlocks(r, r.num_computed + n, &plan->transfers)) {
      SERVESIM_CHECK(!group_step, "decode group step ran out of blocks");
      const size_t victim = policy_->PickVictim(running_, i, reqs);
      self_preempted = running_[victim] == r.id;
      if (victim < i) {
        // Visited earlier this step (scheduled or passed by): the list
        // shifts under the cursor, and a scheduled victim gives its tokens
        // back (vLLM 0.33.0 scheduler.py 944-948).
        const int64_t id = running_[victim];
        const int32_t back = Unschedule(id, plan);
        budget += back;
        // (A scheduled decode gives its slot back too.)
        if (back > 0 && decode_slots_ >= 0 && (*requests_)[id].num_output > 0) ++decode_slots_;
        --i;
      }
      Preempt(victim, plan);
      if (self_preempted) break;
    }
    // It preempted itself: the requests after it may still fit (it freed
    // its blocks), and running_[i] is already the next one (vLLM 0.33.0
    // continues, 982-992; under FCFS the victim is the last, so the pass
    // ends either way).
    if (self_preempted) continue;
    if (decode) --decode_slots_;
    Add(now, r, n, plan, std::min(drafts, n - 1));
    budget -= n;
    ++i;
  }
  return budget;
}

int32_t Scheduler::WaitingPass(SimTime now, int32_t budget, int32_t cap,
                               StepPlan* plan) {
  RequestTable& reqs = *requests_;
  skipped_.clear();
  if (orders_waiting_ && !waiting_.empty() && budget > 0) {
    policy_->OrderWaiting(waiting_.queue(), reqs,
                          [this](int64_t id) { return kvm_.Probe((*requests_)[id]); },
                          config_.block_size);
  }
  while (!waiting_.empty() && budget > 0 &&
         static_cast<int32_t>(num_running()) < config_.max_num_seqs) {
    Request& r = reqs[waiting_.Next()];
    if (r.stale > 0) {
      // Its in-flight output must arrive before it is computed again.
      skipped_.push_back(r.id);
      waiting_.Take();
      continue;
    }
    const int32_t n = Admit(r, budget, cap, plan);
    if (n == 0) break;
    waiting_.Take();
    r.status = RequestStatus::kRunning;
    r.run_key = next_run_key_++;
    running_.push_back(r.id);
    ++plan->admitted;
    plan->cached_tokens += r.num_computed;
    Add(now, r, n, plan);
    budget -= n;
  }
  waiting_.PutBack(skipped_);
  return budget;
}

void Scheduler::Finish(SimTime now, Request& r, std::vector<int64_t>* finished) {
  End(now, r, RequestStatus::kFinished);
  finished->push_back(r.id);
}

void Scheduler::End(SimTime now, Request& r, RequestStatus status) {
  r.finish = now;
  // (Waiting: stale output completed it, or its client went away.)
  if (r.status == RequestStatus::kWaiting) waiting_.Erase(r.id);
  r.status = status;
  kvm_.DropSwap(r);  // swapped out: its copy is no longer needed
  if (config_.hold_kv_after_finish && status == RequestStatus::kFinished) {
    held_.push_back(r.id);  // freed by ReleaseHeld when its transfer ends
  } else {
    kvm_.Free(r);
  }
  r.block_hashes.clear();
  r.block_hashes.shrink_to_fit();
  // vLLM's has_requests() holds until a following schedule reports it.
  finished_unreported_ = true;
}

void Scheduler::ReleaseHeld(int64_t id) {
  Request& r = (*requests_)[id];
  const auto it = std::find(held_.begin(), held_.end(), id);
  SERVESIM_CHECK(it != held_.end(),
                 "ReleaseHeld(%lld) on a request whose blocks are not held",
                 static_cast<long long>(id));
  *it = held_.back();
  held_.pop_back();
  kvm_.Free(r);
}

bool Scheduler::Deliver(SimTime now, const ScheduledSeq& s, bool record_itl,
                        Recorder* recorder, std::vector<int64_t>* finished) {
  Request& r = (*requests_)[s.id];
  r.in_flight -= s.new_tokens;
  bool stale = false;
  if (r.stale > 0) {
    stale = true;
    r.stale -= s.new_tokens;
  }
  // (An aborted request's tokens in flight are dropped.)
  if (r.status == RequestStatus::kFinished || r.status == RequestStatus::kAborted ||
      !s.samples) {
    return false;
  }
  const bool was_running = r.status == RequestStatus::kRunning;
  const bool had_placeholders = r.placeholders > 0;
  // One delivery of 1 + accepted drafts tokens (speculative decoding), one
  // ITL gap for it: vLLM's engine records one inter-token latency per
  // request per step that produced tokens, and vllm bench serve one per
  // streamed chunk.
  const int32_t count = s.spec > 0 ? Verify(s, r) : 1;
  r.num_output += count;
  if (config_.spec.on()) {
    ++r.deliveries;
    r.max_delivered = static_cast<uint8_t>(std::max<int32_t>(r.max_delivered, count));
    r.spec_ready = was_running && r.num_output < r.output_len;
  }
  if (r.first_token < 0) {
    r.first_token = now;
  } else if (r.measured && record_itl) {
    recorder->RecordItlNanos(now - r.last_token);
  }
  r.last_token = now;
  if (!stale && r.placeholders > 0) --r.placeholders;
  // Async: blocks filled by tokens now known become cacheable.
  if (!stale && was_running && had_placeholders && kvm_.prefix_caching()) {
    kvm_.RegisterFullBlocks(r, r.num_computed - r.in_flight);
  }
  if (r.num_output == r.output_len) {
    Finish(now, r, finished);
    return was_running;
  }
  return false;
}

void Scheduler::Commit(SimTime now, const std::vector<ScheduledSeq>& batch,
                       Recorder* recorder, std::vector<int64_t>* finished) {
  // The decode group's entry, if any, is the last (Schedule), and its part
  // is committed after the others: the ITL histogram is order-free, and the
  // requests it finishes are merged below into the step's finishes where
  // their own entries would have put them.
  bool any_finished = false;
  const bool group = !batch.empty() && batch.back().id == kGroupEntry;
  const size_t single = batch.size() - (group ? 1 : 0);
  const size_t first = finished->size();
  for (size_t i = 0; i < single; ++i) {
    any_finished |= Deliver(now, batch[i], true, recorder, finished);
  }
  const size_t mid = finished->size();
  if (group) any_finished |= group_.Commit(now, recorder, finished, this);
  if (finished->size() > mid) {
    // Members finished by the group's part: in the order their own entries
    // would have had, by admission key among the step's finishes (the
    // batch lists its entries by it).
    const RequestTable& reqs = *requests_;
    const auto by_key = [&](int64_t a, int64_t b) {
      return reqs[a].run_key < reqs[b].run_key;
    };
    const auto at = [&](size_t k) {
      return finished->begin() + static_cast<ptrdiff_t>(k);
    };
    std::sort(at(mid), finished->end(), by_key);
    std::inplace_merge(at(first), at(mid), finished->end(), by_key);
  }
  group_.Committed(now);
  if (any_finished) {
    const RequestTable& reqs = *requests_;
    std::erase_if(running_, [&](int64_t id) {
      return reqs[id].status == RequestStatus::kFinished;
    });
  }
}

}  // namespace servesim
