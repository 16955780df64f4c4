// The scheduling mechanism (see scheduler.h for the rules).
#include "sim/engine/scheduler.h"

#include "sim/engine/block_hashing.h"

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
      requests_(requests),
      // Of all blocks, the null block included (vLLM: watermark * num_blocks).
      watermark_blocks_(static_cast<int32_t>(config.watermark * config.num_gpu_blocks)),
      block_shift_(ShiftOf(config.block_size)),
      kv_(std::max(0, config.num_gpu_blocks - kReservedBlocks),
          config.prefix_caching, /*stack_pool=*/!config.reference_engine) {
  if (!config.reference_engine) hash_memo_ = &prefix_hashes_;
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
  const int32_t need = BlocksFor(tokens) - static_cast<int32_t>(r.blocks.size());
  return need <= 0 || kv_.Acquire(nullptr, 0, need, need, &r.blocks);
}

int32_t Scheduler::Admit(Request& r, int32_t budget, int32_t cap) {
  const int32_t bs = config_.block_size;
  int32_t hits = 0;
  if (kv_.prefix_caching()) {
    // At least the last known token is computed to produce logits.
    int32_t lookup = (r.known_tokens() - 1) / bs;
    // Before any preemption its own stream's blocks are in no cache.
    if (r.preemptions == 0) lookup = std::min(lookup, FirstPrivate(r));
    EnsureBlockHashes(&r, lookup, bs, hash_memo_);
    hits = kv_.CountHits(r.block_hashes.data(), lookup, &hit_blocks_);
  }
  const int32_t cached = hits * bs;
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
  const int32_t watermark = running_.empty() ? 0 : watermark_blocks_;
  const int32_t reserve = watermark + (config_.reserve_full_prompt
                                           ? BlocksFor(r.known_tokens()) - hits
                                           : fresh);
  if (!kv_.AcquireFound(hit_blocks_.data(), hits, fresh, reserve, &r.blocks)) {
    return 0;
  }
  r.num_computed = cached + external;
  r.num_registered = hits;
  if (r.cached_tokens < 0) {
    r.cached_tokens = cached;
  } else {
    resume_cached_tokens_ += cached;
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
  kv_.Release(r.blocks);
  r.blocks.clear();
  r.num_computed = 0;
  r.num_registered = 0;
  // Output of steps still in flight arrives later and is delivered, but no
  // longer counts against the reset counters.
  r.stale = r.in_flight;
  r.placeholders = 0;
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
    Request& r = (*requests_)[id];
    // Undo Add's counters that Preempt does not reset: the tokens are no
    // longer in flight (Preempt turns what still is into stale output).
    r.in_flight -= n;
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

void Scheduler::Add(SimTime now, int64_t id, Request& r, int32_t n,
                    std::vector<ScheduledSeq>* batch, BatchShape* shape) {
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
  batch->push_back({id, n, samples, last});
  shape->seqs.push_back({n, context, samples});
  if (r.first_scheduled < 0) r.first_scheduled = now;
}

size_t Scheduler::Schedule(SimTime now, std::vector<ScheduledSeq>* batch,
                           BatchShape* shape) {
  batch->clear();
  shape->seqs.clear();
  finished_unreported_ = false;
  last_preempted_.clear();
  last_admitted_ = 0;
  last_cached_tokens_ = 0;
  int32_t budget = config_.max_num_batched_tokens;
  bool preempted = false;
  RequestTable& reqs = *requests_;
  // A long prompt may not take the whole budget while others are waiting.
  const int32_t cap =
      waiting_.size() + running_.size() > 1 ? config_.long_prefill_token_threshold : 0;

  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request& r = reqs[running_[i]];
    // Async: the step in flight already samples its last token.
    if (r.placeholders > 0 && r.num_computed + 2 - r.placeholders >= r.total_len()) {
      ++i;
      continue;
    }
    int32_t n = r.known_tokens() + r.placeholders - r.num_computed;
    if (cap > 0) n = std::min(n, cap);
    n = std::min(n, budget);
    if (n <= 0) {
      ++i;
      continue;
    }
    bool self_preempted = false;
    while (!EnsureBlocks(r, r.num_computed + n)) {
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
    Add(now, r.id, r, n, batch, shape);
    budget -= n;
    ++i;
  }

  skipped_.clear();
  if (!preempted && policy_->orders_waiting() && !waiting_.empty() && budget > 0) {
    policy_->OrderWaiting(&waiting_, reqs,
                          [this](int64_t id) { return ProbePrefix(id); },
                          config_.block_size);
  }
  while (!preempted && !waiting_.empty() && budget > 0 &&
         static_cast<int32_t>(running_.size()) < config_.max_num_seqs) {
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
    waiting_.erase(waiting_.begin() + static_cast<ptrdiff_t>(idx));
    r.status = RequestStatus::kRunning;
    running_.push_back(r.id);
    ++last_admitted_;
    last_cached_tokens_ += r.num_computed;
    Add(now, r.id, r, n, batch, shape);
    budget -= n;
  }
  waiting_.insert(waiting_.begin(), skipped_.begin(), skipped_.end());
  return batch->size();
}

void Scheduler::Finish(SimTime now, Request& r, std::vector<int64_t>* finished) {
  r.finish = now;
  if (r.status == RequestStatus::kWaiting) {  // stale output completed it
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), r.id));
  }
  r.status = RequestStatus::kFinished;
  if (config_.hold_kv_after_finish) {
    held_.push_back(r.id);  // freed by ReleaseHeld when its transfer ends
  } else {
    kv_.Release(r.blocks);
    r.blocks.clear();
    r.blocks.shrink_to_fit();
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
  r.blocks.clear();
  r.blocks.shrink_to_fit();
}

void Scheduler::Commit(SimTime now, const std::vector<ScheduledSeq>& batch,
                       Recorder* recorder, std::vector<int64_t>* finished) {
  RequestTable& reqs = *requests_;
  bool any_finished = false;
  // Equal gaps in a row (the decoders of the previous step) go to the
  // histogram as one weighted sample, in the same order.
  SimTime run_gap = -1;
  int64_t run_length = 0;
  for (const ScheduledSeq& s : batch) {
    Request& r = reqs[s.id];
    r.in_flight -= s.new_tokens;
    bool stale = false;
    if (r.stale > 0) {
      stale = true;
      r.stale -= s.new_tokens;
    }
    if (r.status == RequestStatus::kFinished || !s.samples) continue;
    const bool was_running = r.status == RequestStatus::kRunning;
    const bool had_placeholders = r.placeholders > 0;
    ++r.num_output;
    if (r.first_token < 0) {
      r.first_token = now;
    } else if (r.measured) {
      const SimTime gap = now - r.last_token;
      if (config_.reference_engine) {
        recorder->RecordItlNanos(gap);
      } else if (gap != run_gap) {
        if (run_length > 0) recorder->RecordItlNanos(run_gap, run_length);
        run_gap = gap;
        run_length = 1;
      } else {
        ++run_length;
      }
    }
    r.last_token = now;
    if (!stale && r.placeholders > 0) --r.placeholders;
    // Async: blocks filled by tokens now known become cacheable.
    if (!stale && was_running && had_placeholders && kv_.prefix_caching()) {
      RegisterFullBlocks(r, r.num_computed - r.in_flight);
    }
    if (r.num_output == r.output_len) {
      any_finished |= was_running;
      Finish(now, r, finished);
    }
  }
  if (run_length > 0) recorder->RecordItlNanos(run_gap, run_length);
  if (any_finished) {
    std::erase_if(running_, [&](int64_t id) {
      return reqs[id].status == RequestStatus::kFinished;
    });
  }
}

void Scheduler::CheckInvariants() const {
  kv_.CheckInvariants();
  const BlockPool& pool = kv_.pool();
  std::vector<int32_t> owners(pool.num_blocks(), 0);
  int64_t held = 0;
  for (int64_t id : running_) {
    const Request& r = (*requests_)[id];
    if (r.status != RequestStatus::kRunning) {
      std::fprintf(stderr, "servesim: request %lld in running list is not running\n",
                   static_cast<long long>(id));
      std::abort();
    }
    for (int32_t b : r.blocks) held += owners[b]++ == 0;  // distinct blocks
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
  }
  for (int64_t id : held_) {
    const Request& r = (*requests_)[id];
    if (r.status != RequestStatus::kFinished) {
      std::fprintf(stderr, "servesim: held request %lld is not finished\n",
                   static_cast<long long>(id));
      std::abort();
    }
    for (int32_t b : r.blocks) held += owners[b]++ == 0;
  }
  for (int64_t id : waiting_) {
    if (!(*requests_)[id].blocks.empty()) {
      std::fprintf(stderr, "servesim: waiting request %lld holds blocks\n",
                   static_cast<long long>(id));
      std::abort();
    }
  }
  for (int32_t b = 0; b < pool.num_blocks(); ++b) {
    if (owners[b] != pool.ref_count(b)) {
      std::fprintf(stderr, "servesim: block %d owned %d times, ref_count %d\n",
                   b, owners[b], pool.ref_count(b));
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
