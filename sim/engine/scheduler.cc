// The scheduling mechanism (see scheduler.h for the rules).
#include "sim/engine/scheduler.h"

#include "sim/engine/block_hashing.h"
#include "sim/engine/spec_decode.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace servesim {
namespace {

int32_t BlocksFor(int32_t tokens, int32_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

// log2 of a power-of-two block size, else -1.
int32_t ShiftOf(int32_t block_size) {
  if (block_size <= 0 || (block_size & (block_size - 1)) != 0) return -1;
  return __builtin_ctz(static_cast<unsigned>(block_size));
}

}  // namespace

int32_t Scheduler::FullBlocks(int32_t tokens) const {
  if (block_shift_ >= 0) return tokens >> block_shift_;
  return tokens / config_.block_size;
}

int32_t Scheduler::BlocksFor(int32_t tokens) const {
  // A shift rather than a division on the per-step path.
  if (block_shift_ >= 0) return (tokens + config_.block_size - 1) >> block_shift_;
  return servesim::BlocksFor(tokens, config_.block_size);
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
      block_shift_(ShiftOf(config.block_size)),
      kv_(std::max(0, config.num_gpu_blocks - kReservedBlocks),
          config.prefix_caching, /*counted_pool=*/!config.reference_engine),
      // Off for the disaggregated roles too: not proven equivalent there.
      // Off with the CPU tier: not proven equivalent there (swap needs
      // the victim's own block count, and evictions are logged by hash).
      // With prefix caching only requests whose blocks are private join
      // (JoinGroup).
      group_on_(config.decode_group && !config.reference_engine && !config.hold_kv_after_finish &&
                !config.remote_prefill && config.cpu_blocks == 0 &&
                !config.spec.on()),
      finish_in_group_(group_on_ && !config.prefix_caching),
      group_(std::max(1, config.block_size)) {
  if (!config.reference_engine) hash_memo_ = &prefix_hashes_;
  if (config.cpu_blocks > 0) {
    cpu_ = std::make_unique<CpuTier>(config.cpu_blocks);
    if (config.prefix_caching) kv_.set_eviction_log(&evicted_);
  }
}

void Scheduler::SpillEvicted() {
  for (uint64_t h : evicted_) last_transfers_.store += cpu_->Offer(h) ? 1 : 0;
  evicted_.clear();
}

void Scheduler::SwapOut(Request& r) {
  const int32_t n = BlocksFor(r.num_computed);
  if (n > 0 && cpu_->ReserveSwap(n)) {
    r.swapped_tokens = r.num_computed;
    r.swap_blocks = n;
    last_transfers_.swap_out += n;
    ++swap_preemptions_;
  } else {
    ++swap_fallbacks_;  // no room: recompute
  }
}

int32_t Scheduler::FirstPrivate(const Request& r) const {
  return config_.reference_engine ? INT32_MAX
                                  : FirstPrivateBlock(r, config_.block_size);
}

const char* Scheduler::CheckServable(const Request& r) const {
  if (BlocksFor(r.max_cached_tokens()) >
      kv_.num_blocks()) {
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
  waiting_.push_back(id);
}

bool Scheduler::EnsureBlocks(Request& r, int32_t tokens) {
  const int32_t need = BlocksFor(tokens) - r.blocks.size();
  if (need <= 0) return true;
  const bool ok = kv_.Acquire(need, need, &r.blocks);
  if (!evicted_.empty()) SpillEvicted();
  return ok;
}

int32_t Scheduler::Admit(Request& r, int32_t budget, int32_t cap) {
  const int32_t bs = config_.block_size;
  int32_t hits = 0, cpu_hits = 0;
  if (kv_.prefix_caching()) {
    // At least the last known token is computed to produce logits.
    int32_t lookup = (r.known_tokens() - 1) / bs;
    // Before any preemption its own stream's blocks are in no cache.
    if (r.preemptions == 0) lookup = std::min(lookup, FirstPrivate(r));
    EnsureBlockHashes(&r, lookup, bs, hash_memo_);
    hits = kv_.CountHits(r.block_hashes.data(), lookup, &hit_blocks_);
    // The CPU tier continues the run the GPU cache started (a swapped
    // request's own copy serves it instead).
    if (cpu_ != nullptr && r.swap_blocks == 0) {
      while (hits + cpu_hits < lookup &&
             cpu_->Contains(r.block_hashes[hits + cpu_hits])) {
        ++cpu_hits;
      }
    }
  }
  int32_t cached = (hits + cpu_hits) * bs;
  // Swapped out: its KV comes back from the CPU tier, beyond what the GPU
  // cache still holds; at least its last known token is computed.
  int32_t swap_in = 0;
  if (r.swap_blocks > 0) {
    const int32_t resume = std::min(r.swapped_tokens, r.known_tokens() - 1);
    if (resume > cached) {
      swap_in = BlocksFor(resume) - hits;
      cached = resume;
    }
  }
  // Disaggregated decode: the prompt's KV came from a prefill instance;
  // only its last token is computed here (the first admission only).
  const int32_t external =
      config_.remote_prefill && r.preemptions == 0 && r.num_output == 0
          ? std::max(0, r.prompt_len - 1 - cached)
          : 0;
  int32_t left = r.known_tokens() - cached - external;
  if (cap > 0) left = std::min(left, cap);
  if (!config_.chunked_prefill && left > budget) return 0;
  const int32_t n = std::min(left, budget);
  const int32_t fresh = BlocksFor(cached + external + n) - hits;
  const int32_t watermark = num_running() == 0 ? 0 : watermark_blocks_;
  const int32_t reserve = watermark + (config_.reserve_full_prompt
                                           ? BlocksFor(r.known_tokens()) - hits
                                           : fresh);
  // Its whole block list at once: one allocation per request, not one per
  // doubling (capacity only; the blocks are what they were). A counted
  // pool's list holds no ids.
  if (!kv_.pool().counted() && r.blocks.capacity() == 0) {
    r.blocks.reserve(static_cast<size_t>(BlocksFor(r.max_cached_tokens())));
  }
  if (!kv_.AcquireFound(hit_blocks_.data(), hits, fresh, reserve, &r.blocks)) {
    return 0;
  }
  r.num_computed = cached + external;
  r.num_registered = hits;
  if (cpu_ != nullptr) {
    // Loaded before the blocks the acquire evicted are offered to the tier.
    for (int32_t i = hits; i < hits + cpu_hits; ++i) cpu_->Touch(r.block_hashes[i]);
    last_transfers_.load += cpu_hits;
    if (r.swap_blocks > 0) {
      cpu_->ReleaseSwap(r.swap_blocks);
      last_transfers_.swap_in += swap_in;
      r.swap_blocks = 0;
      r.swapped_tokens = 0;
    }
    if (!evicted_.empty()) SpillEvicted();
  }
  const int32_t prefix_hit = (hits + cpu_hits) * bs;
  if (r.cached_tokens < 0) {
    r.cached_tokens = cached;
    r.cpu_cached_tokens = cpu_hits * bs;
  } else {
    resume_cached_tokens_ += prefix_hit;
  }
  return n;
}

void Scheduler::RegisterFullBlocks(Request& r, int32_t tokens) {
  const int32_t bs = config_.block_size;
  const int32_t full = FullBlocks(tokens);
  if (full <= r.num_registered) return;
  // Blocks of its own stream are hashed only once it is preempted (Preempt
  // publishes those it holds): until then no request can hit them.
  const int32_t shared =
      r.preemptions == 0 ? std::min(full, FirstPrivate(r)) : full;
  EnsureBlockHashes(&r, shared, bs, hash_memo_);
  for (int32_t i = r.num_registered; i < full; ++i) {
    if (i < shared) {
      kv_.Register(r.blocks[i], r.block_hashes[i]);
    } else {
      kv_.RegisterPrivate(r.blocks[i]);
    }
  }
  r.num_registered = full;
}

void Scheduler::PublishPrivateBlocks(Request& r) {
  const int32_t bs = config_.block_size;
  const int32_t first = FirstPrivate(r);
  if (first >= r.num_registered) return;
  EnsureBlockHashes(&r, r.num_registered, bs, hash_memo_);
  for (int32_t i = first; i < r.num_registered; ++i) {
    kv_.Publish(r.blocks[i], r.block_hashes[i]);
  }
}

void Scheduler::Preempt(size_t running_index) {
  const int64_t id = running_[running_index];
  Request& r = (*requests_)[id];
  // It may resume from its own blocks: from now on they are hashed.
  if (kv_.prefix_caching() && r.preemptions == 0) PublishPrivateBlocks(r);
  if (config_.swap_preemption) SwapOut(r);
  kv_.Release(r.blocks);
  r.blocks.clear();
  r.num_computed = 0;
  r.num_registered = 0;
  // Output of steps still in flight arrives later and is delivered, but no
  // longer counts against the reset counters.
  r.stale = r.in_flight;
  r.placeholders = 0;
  r.spec_ready = false;  // its drafts are dropped with its KV
  ++r.preemptions;
  last_preempted_.push_back(id);
  r.status = RequestStatus::kWaiting;
  running_.erase(running_.begin() + static_cast<ptrdiff_t>(running_index));
  waiting_.push_front(id);
}

int32_t Scheduler::Unschedule(int64_t id, std::vector<ScheduledSeq>* batch,
                              BatchShape* shape) {
  for (size_t k = batch->size(); k-- > 0;) {
    if ((*batch)[k].id != id) continue;
    const int32_t n = (*batch)[k].new_tokens;
    last_tokens_ -= n;
    last_finishing_ -= (*batch)[k].last;
    Request& r = (*requests_)[id];
    // Undo Add's counters that Preempt does not reset: the tokens are no
    // longer in flight (Preempt turns what still is into stale output).
    r.in_flight -= n;
    r.num_computed -= n;  // (Preempt resets it; a swap keeps what is left)
    batch->erase(batch->begin() + static_cast<ptrdiff_t>(k));
    shape->seqs.erase(shape->seqs.begin() + static_cast<ptrdiff_t>(k));
    return n;
  }
  return 0;
}

PrefixMatch Scheduler::ProbePrefix(int64_t id) {
  PrefixMatch m;
  if (!kv_.prefix_caching()) return m;
  Request& r = (*requests_)[id];
  const int32_t bs = config_.block_size;
  // The lookup Admit makes (at least the last known token is computed).
  int32_t lookup = (r.known_tokens() - 1) / bs;
  if (r.preemptions == 0) lookup = std::min(lookup, FirstPrivate(r));
  EnsureBlockHashes(&r, lookup, bs, hash_memo_);
  m.cached_tokens = kv_.CountHits(r.block_hashes.data(), lookup) * bs;
  m.hashes = r.block_hashes.data();
  m.num_hashes = lookup;
  return m;
}

int32_t Scheduler::DraftTokens(Request& r, int32_t n) const {
  // Drafts exist after a step that sampled for it (the proposer runs on
  // every sequence that sampled); a decode verifies them with its token.
  // Never more than its remaining output can take: delivering the drafts
  // and the bonus token may not pass output_len.
  if (!r.spec_ready || n != 1 || r.num_output == 0) return 0;
  return std::max(0, std::min(config_.spec.num_speculative_tokens,
                              r.output_len - r.num_output - 1));
}

void Scheduler::Add(SimTime now, int64_t id, Request& r, int32_t n,
                    std::vector<ScheduledSeq>* batch, BatchShape* shape,
                    int32_t spec) {
  // Blocks become cacheable as soon as their tokens are scheduled, up to
  // the tokens known (never a placeholder's).
  if (kv_.prefix_caching()) {
    const int32_t upto = std::min(r.num_computed + n, r.known_tokens());
    if (FullBlocks(upto) > r.num_registered) RegisterFullBlocks(r, upto);
  }
  const int32_t context = r.num_computed;
  r.num_computed += n;
  r.in_flight += n;
  const bool samples = r.num_computed >= r.known_tokens() + r.placeholders;
  if (samples && config_.async_scheduling) ++r.placeholders;
  // The token sampled is the num_output + (tokens in flight before it) + 1st;
  // a request is never readmitted with stale output in flight.
  const bool last = samples && r.num_output + std::max(r.placeholders, 1) == r.output_len;
  batch->push_back({id, n, samples, last, spec});
  last_tokens_ += n;
  last_finishing_ += last;
  if (group_on_ && samples && !last) join_candidates_.push_back(id);
  shape->seqs.push_back({n, context, samples});
  if (r.first_scheduled < 0) r.first_scheduled = now;
}

size_t Scheduler::Schedule(SimTime now, std::vector<ScheduledSeq>* batch,
                           BatchShape* shape) {
  batch->clear();
  shape->seqs.clear();
  shape->decode_seqs = 0;
  shape->decode_context = 0;
  finished_unreported_ = false;
  last_preempted_.clear();
  last_transfers_ = TransferCounts{};
  last_admitted_ = 0;
  last_cached_tokens_ = 0;
  last_tokens_ = 0;
  last_finishing_ = 0;
  last_group_finishing_ = 0;
  int32_t budget = config_.max_num_batched_tokens;
  bool preempted = false;
  RequestTable& reqs = *requests_;
  // A long prompt may not take the whole budget while others are waiting.
  const int32_t cap = config_.long_prefill_token_threshold > 0 &&
                              waiting_.size() + num_running() > 1
                          ? config_.long_prefill_token_threshold
                          : 0;
  // The members are scheduled whole after the running requests: where they
  // stand among them cannot matter, as nobody's tokens or blocks run short.
  const bool group_step = !group_.empty() && PrepareGroup(cap);
  if (!group_step && !finishing_.empty()) MaterializeFinishing();
  int32_t group_members = 0;  // its entry is added last

  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request& r = reqs[running_[i]];
    // Async: the step in flight already samples its last token.
    if (r.placeholders > 0 && r.num_computed + 2 - r.placeholders >= r.total_len()) {
      ++i;
      continue;
    }
    int32_t n = r.known_tokens() + r.placeholders - r.num_computed;
    // Speculative decoding: k draft tokens ride with the decode token and
    // count against the budget (vLLM's num_scheduled_tokens); a short
    // budget drops the last drafts.
    const int32_t drafts = r.spec_ready ? DraftTokens(r, n) : 0;
    n += drafts;
    if (cap > 0) n = std::min(n, cap);
    n = std::min(n, budget);
    if (n <= 0) {
      ++i;
      continue;
    }
    bool self_preempted = false;
    while (!EnsureBlocks(r, r.num_computed + n)) {
      if (group_step) {
        std::fprintf(stderr, "servesim: decode group step ran out of blocks\n");
        std::abort();
      }
      const size_t victim = policy_->PickVictim(running_, i, reqs);
      preempted = true;
      self_preempted = running_[victim] == r.id;
      if (victim < i) {
        // Visited earlier this step. vLLM steps back only over a victim it
        // had scheduled; over one it passed by it does not, so the request
        // after the current one is then skipped this step (as vLLM).
        const int32_t back = Unschedule(running_[victim], batch, shape);
        budget += back;
        if (back > 0) --i;
      }
      Preempt(victim);
      if (self_preempted) break;
    }
    // vLLM: the request that could not be scheduled ends the running pass.
    if (self_preempted) break;
    Add(now, r.id, r, n, batch, shape, std::min(drafts, n - 1));
    budget -= n;
    ++i;
  }

  if (group_step) {
    const int32_t members = group_.size();
    const int32_t fresh = group_.BlocksNeeded();
    if (members > budget ||
        (fresh > 0 && !kv_.Acquire(fresh, fresh, &group_blocks_))) {
      std::fprintf(stderr, "servesim: decode group step did not fit\n");
      std::abort();
    }
    shape->decode_seqs = members;
    shape->decode_context = group_.context_sum();
    last_tokens_ += members;
    group_members = members;
    group_in_flight_.push_back({group_.step(), group_.measured()});
    if (finish_in_group_) {
      // Members whose last step this is leave now (by admission key).
      const size_t before = finishing_.size();
      while (group_.Due()) finishing_.push_back(group_.PopDue());
      group_.Advance();
      last_group_finishing_ = static_cast<int32_t>(finishing_.size() - before);
      last_finishing_ += last_group_finishing_;
    } else {
      group_.Advance();
    }
    budget -= members;
  }

  skipped_.clear();
  if (orders_waiting_ && !preempted && !waiting_.empty() && budget > 0) {
    policy_->OrderWaiting(&waiting_, reqs,
                          [this](int64_t id) { return ProbePrefix(id); },
                          config_.block_size);
  }
  while (!preempted && !waiting_.empty() && budget > 0 &&
         static_cast<int32_t>(num_running()) < config_.max_num_seqs) {
    const size_t idx = policy_->PickNext(waiting_, reqs);
    Request& r = reqs[waiting_[idx]];
    if (r.stale > 0) {
      // Its in-flight output must arrive before it is computed again.
      skipped_.push_back(r.id);
      waiting_.erase(waiting_.begin() + static_cast<ptrdiff_t>(idx));
      continue;
    }
    const int32_t n = Admit(r, budget, cap);
    if (n == 0) break;
    if (idx == 0) {
      waiting_.pop_front();  // (FCFS: the deque's general erase is slower)
    } else {
      waiting_.erase(waiting_.begin() + static_cast<ptrdiff_t>(idx));
    }
    r.status = RequestStatus::kRunning;
    r.run_key = next_run_key_++;
    running_.push_back(r.id);
    ++last_admitted_;
    last_cached_tokens_ += r.num_computed;
    Add(now, r.id, r, n, batch, shape);
    budget -= n;
  }
  waiting_.insert(waiting_.begin(), skipped_.begin(), skipped_.end());
  // The group's entry goes last (Commit finds it there); its place among
  // the others changes nothing: its members are none of theirs.
  if (group_step) batch->push_back({kGroupEntry, group_members, true, false});
  if (!join_candidates_.empty()) JoinGroup();
  transfers_ += last_transfers_;
  return shape->size();
}

bool Scheduler::GroupStepFits(int32_t cap) const {
  // What the loop over running_ will ask for, without budget limits.
  int64_t tokens = group_.size();
  int64_t blocks = group_.BlocksNeeded();
  const RequestTable& reqs = *requests_;
  for (int64_t id : running_) {
    const Request& r = reqs[id];
    if (r.placeholders > 0 && r.num_computed + 2 - r.placeholders >= r.total_len()) {
      continue;
    }
    int32_t n = r.known_tokens() + r.placeholders - r.num_computed;
    if (cap > 0) n = std::min(n, cap);
    if (n <= 0) continue;
    tokens += n;
    blocks += std::max<int64_t>(
        0, BlocksFor(r.num_computed + n) - static_cast<int64_t>(r.blocks.size()));
  }
  return tokens <= config_.max_num_batched_tokens && blocks <= kv_.num_free();
}

bool Scheduler::PrepareGroup(int32_t cap) {
  // With prefix caching last steps are scheduled one by one (they finish
  // the request); without, members leave after their last step is batched.
  while (!finish_in_group_ && group_.Due()) {
    const DecodeGroup::Member m = group_.PopDue();
    Rebuild(m, group_.step());
    InsertRunning(m.id);
  }
  if (group_.empty()) return false;
  if (GroupStepFits(cap)) return true;
  MaterializeAll();  // this step is short: run it one by one
  return false;
}

void Scheduler::Rebuild(const DecodeGroup::Member& m, int64_t until) {
  Request& r = (*requests_)[m.id];
  // Group steps it took part in, and of them those committed.
  const int64_t steps = until - m.joined;
  const int64_t done = std::max<int64_t>(0, group_commits_ - m.joined);
  const auto pending = static_cast<int32_t>(steps - done);
  r.num_computed = m.joined_context + static_cast<int32_t>(steps);
  r.in_flight += pending;
  if (config_.async_scheduling) r.placeholders += pending;
  r.num_output += static_cast<int32_t>(done);
  if (done > 0) r.last_token = last_group_commit_;
  const int32_t owed = BlocksFor(r.num_computed) - r.blocks.size();
  if (owed < 0 || owed > group_blocks_.size()) {
    std::fprintf(stderr, "servesim: decode group owes request %lld %d blocks, holds %d\n",
                 static_cast<long long>(m.id), owed, group_blocks_.size());
    std::abort();
  }
  group_blocks_.MoveTail(owed, &r.blocks);
  if (pending > 0) {
    orphans_.push_back({m.id, std::max(m.joined, group_commits_), until});
  }
  // Prefix caching: the blocks its group steps filled are registered (all
  // privately: JoinGroup) as one by one they would have been, by Add's
  // scheduled known tokens (sync) or by the last delivery (async) -- either
  // way the tokens computed and no longer in flight. Until now they were
  // held by the group, where registration changes nothing.
  if (kv_.prefix_caching()) {
    const int32_t full = FullBlocks(r.num_computed - r.in_flight);
    for (int32_t i = r.num_registered; i < full; ++i) kv_.RegisterPrivate(r.blocks[i]);
    r.num_registered = std::max(r.num_registered, full);
  }
}

void Scheduler::InsertRunning(int64_t id) {
  const RequestTable& reqs = *requests_;
  const int64_t key = reqs[id].run_key;
  const auto at = std::lower_bound(
      running_.begin(), running_.end(), key,
      [&](int64_t a, int64_t k) { return reqs[a].run_key < k; });
  running_.insert(at, id);
}

void Scheduler::MaterializeFinishing() {
  for (const DecodeGroup::Member& m : finishing_) {
    Rebuild(m, m.last_step + 1);
    InsertRunning(m.id);
  }
  finishing_.clear();
}

void Scheduler::MaterializeAll() {
  MaterializeFinishing();  // (their owed blocks leave the group first)
  std::vector<DecodeGroup::Member> all = group_.TakeAll();
  std::sort(all.begin(), all.end(),
            [](const DecodeGroup::Member& a, const DecodeGroup::Member& b) {
              return a.key < b.key;
            });
  const size_t old = running_.size();
  for (const DecodeGroup::Member& m : all) {
    Rebuild(m, group_.step());
    running_.push_back(m.id);
  }
  const RequestTable& reqs = *requests_;
  std::inplace_merge(running_.begin(), running_.begin() + static_cast<ptrdiff_t>(old),
                     running_.end(), [&](int64_t a, int64_t b) {
                       return reqs[a].run_key < reqs[b].run_key;
                     });
  if (!group_blocks_.empty()) {
    std::fprintf(stderr, "servesim: decode group kept %d blocks nobody owns\n",
                 group_blocks_.size());
    std::abort();
  }
}

void Scheduler::FlushDecodeGroup() {
  MaterializeFinishing();
  if (!group_.empty()) MaterializeAll();
}

void Scheduler::JoinGroup() {
  RequestTable& reqs = *requests_;
  joining_.clear();
  for (const int64_t id : join_candidates_) {
    Request& r = reqs[id];
    // Its step sampled: from the next on it decodes one token a step
    // (context >= 1). One whose next step is its last stays out.
    const int64_t left = r.total_len() - 2 - r.num_computed;
    if (r.status != RequestStatus::kRunning || left < 1) continue;
    // Prefix caching: only a request whose blocks from now on are all
    // private (its own stream, never preempted) joins: nobody can hit
    // them, so which group block it ends up with, and registering them
    // only when it leaves (Rebuild), cannot change any result.
    if (kv_.prefix_caching() &&
        (r.preemptions != 0 || FirstPrivate(r) > r.num_registered)) {
      continue;
    }
    if (r.stale != 0 || r.blocks.size() != BlocksFor(r.num_computed)) {
      std::fprintf(stderr, "servesim: request %lld joins the decode group in a "
                   "bad state (stale %d, %d blocks for %d tokens)\n",
                   static_cast<long long>(r.id), r.stale, r.blocks.size(),
                   r.num_computed);
      std::abort();
    }
    // Its last step samples token output_len: at num_computed total - 2.
    const int64_t last = group_.step() + left;
    group_.Join({last, r.run_key, r.id, group_.step(), r.num_computed, r.measured});
    joining_.push_back(r.id);
  }
  join_candidates_.clear();
  if (joining_.empty()) return;
  // The batch lists running requests in running_'s order.
  size_t next = 0;
  std::erase_if(running_, [&](int64_t id) {
    if (next == joining_.size() || joining_[next] != id) return false;
    ++next;
    return true;
  });
  if (next != joining_.size()) {
    std::fprintf(stderr, "servesim: decode group joins out of running order\n");
    std::abort();
  }
}

void Scheduler::Finish(SimTime now, Request& r, std::vector<int64_t>* finished) {
  r.finish = now;
  if (r.status == RequestStatus::kWaiting) {  // stale output completed it
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), r.id));
  }
  r.status = RequestStatus::kFinished;
  if (r.swap_blocks > 0) {  // swapped out: its copy is no longer needed
    cpu_->ReleaseSwap(r.swap_blocks);
    r.swap_blocks = 0;
    r.swapped_tokens = 0;
  }
  if (config_.hold_kv_after_finish) {
    held_.push_back(r.id);  // freed by ReleaseHeld when its transfer ends
  } else {
    kv_.Release(r.blocks);
    r.blocks.Free();
  }
  r.block_hashes.clear();
  r.block_hashes.shrink_to_fit();
  finished->push_back(r.id);
  finished_unreported_ = true;
}

void Scheduler::ReleaseHeld(int64_t id) {
  Request& r = (*requests_)[id];
  const auto it = std::find(held_.begin(), held_.end(), id);
  if (it == held_.end()) {
    std::fprintf(stderr, "servesim: ReleaseHeld(%lld) on a request whose blocks "
                 "are not held\n", static_cast<long long>(id));
    std::abort();
  }
  *it = held_.back();
  held_.pop_back();
  kv_.Release(r.blocks);
  r.blocks.Free();
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
  if (r.status == RequestStatus::kFinished || !s.samples) return false;
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
  if (!stale && was_running && had_placeholders && kv_.prefix_caching()) {
    RegisterFullBlocks(r, r.num_computed - r.in_flight);
  }
  if (r.num_output == r.output_len) {
    Finish(now, r, finished);
    return was_running;
  }
  return false;
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
  const int32_t keep = BlocksFor(r.num_computed);
  if (r.blocks.size() > keep) {
    rejected_blocks_.clear();
    r.blocks.MoveTail(r.blocks.size() - keep, &rejected_blocks_);
    kv_.Release(rejected_blocks_);
  }
  return a + 1;
}

bool Scheduler::CommitGroup(SimTime now, Recorder* recorder,
                            std::vector<int64_t>* finished) {
  const GroupPart part = group_in_flight_.front();
  group_in_flight_.pop_front();
  // Every member of the part had its previous token from the previous
  // step (a group step, or the one-by-one step it joined in): one gap.
  if (part.measured > 0) recorder->RecordItlNanos(now - last_commit_, part.measured);
  group_commits_ = part.step + 1;
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
      if (r.num_output != r.output_len || r.in_flight != 0) {
        std::fprintf(stderr, "servesim: finishing member %lld has %d of %d tokens, "
                     "%d in flight\n", static_cast<long long>(m.id), r.num_output,
                     r.output_len, r.in_flight);
        std::abort();
      }
      Finish(now, r, finished);
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
      if (Deliver(now, {o.id, 1, true, false}, false, recorder, finished)) {
        if (!finish_in_group_) {
          std::fprintf(stderr, "servesim: request %lld finished in a group step\n",
                       static_cast<long long>(o.id));
          std::abort();
        }
        ran_out = true;
      }
    }
  }
  std::erase_if(orphans_, [&](const Orphan& o) { return o.until <= group_commits_; });
  return ran_out;
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
  if (group) any_finished |= CommitGroup(now, recorder, finished);
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
  last_commit_ = now;
  if (any_finished) {
    const RequestTable& reqs = *requests_;
    std::erase_if(running_, [&](int64_t id) {
      return reqs[id].status == RequestStatus::kFinished;
    });
  }
}

void Scheduler::CheckCpuTier() const {
  const RequestTable& reqs = *requests_;
  int64_t swap = 0;
  for (int64_t id : waiting_) {
    const Request& r = reqs[id];
    const int32_t want = r.swapped_tokens > 0 ? BlocksFor(r.swapped_tokens) : 0;
    if (r.swap_blocks != want || (r.swap_blocks > 0 && cpu_ == nullptr)) {
      std::fprintf(stderr, "servesim: waiting request %lld holds %d CPU blocks for "
                   "%d swapped tokens\n", static_cast<long long>(id), r.swap_blocks,
                   r.swapped_tokens);
      std::abort();
    }
    swap += r.swap_blocks;
  }
  for (int64_t id : running_) {
    if (reqs[id].swap_blocks != 0 || reqs[id].swapped_tokens != 0) {
      std::fprintf(stderr, "servesim: running request %lld is still swapped out\n",
                   static_cast<long long>(id));
      std::abort();
    }
  }
  if (cpu_ == nullptr) return;
  cpu_->CheckInvariants();
  if (swap != cpu_->swap_used()) {
    std::fprintf(stderr, "servesim: CPU tier holds %lld swap blocks, waiting requests %lld\n",
                 static_cast<long long>(cpu_->swap_used()), static_cast<long long>(swap));
    std::abort();
  }
  if (!evicted_.empty()) {
    std::fprintf(stderr, "servesim: %zu evicted blocks not offered to the CPU tier\n",
                 evicted_.size());
    std::abort();
  }
}

void Scheduler::CheckInvariants() const {
  kv_.CheckInvariants();
  CheckCpuTier();
  const BlockPool& pool = kv_.pool();
  // Distinct blocks held. A counted pool's blocks have one holder each, so
  // the holders' counts must sum to the pool's used count: a block
  // released while still held (a double release) breaks that.
  std::vector<int32_t> owners(pool.counted() ? 0 : pool.num_blocks(), 0);
  int64_t held = 0;
  const auto own = [&](const BlockList& l) {
    if (pool.counted() ? !l.ids().empty() : l.counted() != 0) {
      std::fprintf(stderr, "servesim: a block list of the wrong kind (%zu ids, %d counted)\n",
                   l.ids().size(), l.counted());
      std::abort();
    }
    held += l.counted();
    for (int32_t b : l.ids()) held += owners[b]++ == 0;
  };
  for (int64_t id : running_) {
    const Request& r = (*requests_)[id];
    if (r.status != RequestStatus::kRunning) {
      std::fprintf(stderr, "servesim: request %lld in running list is not running\n",
                   static_cast<long long>(id));
      std::abort();
    }
    own(r.blocks);
    if (static_cast<int64_t>(r.blocks.size()) <
        BlocksFor(r.num_computed)) {
      std::fprintf(stderr, "servesim: request %lld has too few blocks\n",
                   static_cast<long long>(id));
      std::abort();
    }
    if (r.num_output > r.output_len || r.num_computed > r.total_len()) {
      std::fprintf(stderr, "servesim: request %lld overran its length\n",
                   static_cast<long long>(id));
      std::abort();
    }
    // Speculative decoding (synchronous): after a step, no rejected draft
    // is left in the KV cache -- only known tokens are computed, and the
    // blocks cover exactly them.
    if (config_.spec.on() &&
        (r.num_computed >= r.known_tokens() ||
         static_cast<int32_t>(r.blocks.size()) != BlocksFor(r.num_computed))) {
      std::fprintf(stderr, "servesim: request %lld keeps draft KV: %d computed "
                   "of %d known, %d blocks\n", static_cast<long long>(id),
                   r.num_computed, r.known_tokens(), r.blocks.size());
      std::abort();
    }
  }
  // Members hold the blocks they had when they joined; the group holds the
  // rest of what their contexts need now (finishing ones: after their last
  // step).
  int64_t owed = 0;
  for (const DecodeGroup::Member& m : finishing_) {
    const Request& r = (*requests_)[m.id];
    const int64_t context = m.joined_context + (m.last_step + 1 - m.joined);
    if (r.status != RequestStatus::kRunning || r.num_computed != m.joined_context ||
        m.last_step >= group_.step() || context > r.max_cached_tokens()) {
      std::fprintf(stderr, "servesim: finishing member %lld in a bad state\n",
                   static_cast<long long>(m.id));
      std::abort();
    }
    own(r.blocks);
    owed += BlocksFor(static_cast<int32_t>(context)) - static_cast<int64_t>(r.blocks.size());
  }
  for (const DecodeGroup::Member& m : group_.members()) {
    const Request& r = (*requests_)[m.id];
    const int64_t context = m.joined_context + (group_.step() - m.joined);
    if (r.status != RequestStatus::kRunning || r.num_computed != m.joined_context ||
        context > r.max_cached_tokens() || m.last_step < group_.step()) {
      std::fprintf(stderr, "servesim: decode group member %lld in a bad state\n",
                   static_cast<long long>(m.id));
      std::abort();
    }
    own(r.blocks);
    owed += BlocksFor(static_cast<int32_t>(context)) - static_cast<int64_t>(r.blocks.size());
  }
  own(group_blocks_);
  if (owed != static_cast<int64_t>(group_blocks_.size())) {
    std::fprintf(stderr, "servesim: decode group holds %d blocks, owes %lld\n",
                 group_blocks_.size(), static_cast<long long>(owed));
    std::abort();
  }
  for (int64_t id : held_) {
    const Request& r = (*requests_)[id];
    if (r.status != RequestStatus::kFinished) {
      std::fprintf(stderr, "servesim: held request %lld is not finished\n",
                   static_cast<long long>(id));
      std::abort();
    }
    own(r.blocks);
  }
  for (int64_t id : waiting_) {
    if (!(*requests_)[id].blocks.empty()) {
      std::fprintf(stderr, "servesim: waiting request %lld holds blocks\n",
                   static_cast<long long>(id));
      std::abort();
    }
  }
  const std::vector<int32_t> refs =
      pool.counted() ? std::vector<int32_t>() : pool.RefCounts();
  for (int32_t b = 0; b < static_cast<int32_t>(refs.size()); ++b) {
    if (owners[b] != refs[b]) {
      std::fprintf(stderr, "servesim: block %d owned %d times, ref_count %d\n",
                   b, owners[b], refs[b]);
      std::abort();
    }
  }
  if (held != pool.num_used()) {
    std::fprintf(stderr, "servesim: %lld blocks held, pool says %d used\n",
                 static_cast<long long>(held), pool.num_used());
    std::abort();
  }
}

}  // namespace servesim
