// The scheduling mechanism (see scheduler.h for the rules).
#include "sim/engine/scheduler.h"

#include "sim/engine/block_hashing.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace servesim {
namespace {

int32_t BlocksFor(int32_t tokens, int32_t block_size) {
  return (tokens + block_size - 1) / block_size;
}

}  // namespace

Scheduler::Scheduler(const EngineConfig& config,
                     std::unique_ptr<SchedulerPolicy> policy,
                     RequestTable* requests)
    : config_(config),
      policy_(std::move(policy)),
      requests_(requests),
      kv_(config.num_gpu_blocks, config.prefix_caching) {}

const char* Scheduler::CheckServable(const Request& r) const {
  if (BlocksFor(r.max_cached_tokens(), config_.block_size) >
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
  const int32_t need =
      BlocksFor(tokens, config_.block_size) - static_cast<int32_t>(r.blocks.size());
  return need <= 0 || kv_.Acquire(nullptr, 0, need, &r.blocks);
}

int32_t Scheduler::Admit(Request& r, int32_t budget) {
  const int32_t bs = config_.block_size;
  int32_t hits = 0;
  if (kv_.prefix_caching()) {
    // At least the last known token is computed to produce logits.
    const int32_t lookup = (r.known_tokens() - 1) / bs;
    EnsureBlockHashes(&r, lookup, bs);
    hits = kv_.CountHits(r.block_hashes.data(), lookup);
  }
  const int32_t cached = hits * bs;
  const int32_t left = r.known_tokens() - cached;
  if (!config_.chunked_prefill && left > budget) return 0;
  const int32_t n = std::min(left, budget);
  const int32_t fresh = BlocksFor(cached + n, bs) - hits;
  if (!kv_.Acquire(r.block_hashes.data(), hits, fresh, &r.blocks)) return 0;
  r.num_computed = cached;
  r.num_registered = hits;
  if (r.cached_tokens < 0) {
    r.cached_tokens = cached;
  } else {
    resume_cached_tokens_ += cached;
  }
  return n;
}

void Scheduler::RegisterFullBlocks(Request& r) {
  const int32_t full = r.num_computed / config_.block_size;
  if (full <= r.num_registered) return;
  EnsureBlockHashes(&r, full, config_.block_size);
  for (int32_t i = r.num_registered; i < full; ++i) {
    kv_.Register(r.blocks[i], r.block_hashes[i]);
  }
  r.num_registered = full;
}

void Scheduler::Preempt(size_t running_index) {
  const int64_t id = running_[running_index];
  Request& r = (*requests_)[id];
  kv_.Release(r.blocks);
  r.blocks.clear();
  r.num_computed = 0;
  r.num_registered = 0;
  ++r.preemptions;
  ++num_preemptions_;
  r.status = RequestStatus::kWaiting;
  running_.erase(running_.begin() + static_cast<ptrdiff_t>(running_index));
  waiting_.push_front(id);
}

size_t Scheduler::Schedule(SimTime now, std::vector<ScheduledSeq>* batch,
                           BatchShape* shape) {
  batch->clear();
  shape->seqs.clear();
  int32_t budget = config_.max_num_batched_tokens;
  bool preempted = false;
  RequestTable& reqs = *requests_;

  auto add = [&](Request& r, int32_t n) {
    batch->push_back({r.id, n});
    shape->seqs.push_back({n, r.num_computed, r.num_computed + n == r.known_tokens()});
    if (r.first_scheduled < 0) r.first_scheduled = now;
    budget -= n;
  };

  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request& r = reqs[running_[i]];
    const int32_t n = std::min(r.known_tokens() - r.num_computed, budget);
    bool self_preempted = false;
    while (!EnsureBlocks(r, r.num_computed + n)) {
      const size_t victim = policy_->PickVictim(running_, i, reqs);
      preempted = true;
      self_preempted = running_[victim] == r.id;
      Preempt(victim);
      if (self_preempted) break;
    }
    if (self_preempted) continue;  // running_[i] is now the next request
    add(r, n);
    ++i;
  }

  while (!preempted && !waiting_.empty() && budget > 0 &&
         static_cast<int32_t>(running_.size()) < config_.max_num_seqs) {
    const size_t idx = policy_->PickNext(waiting_, reqs);
    Request& r = reqs[waiting_[idx]];
    const int32_t n = Admit(r, budget);
    if (n == 0) break;
    waiting_.erase(waiting_.begin() + static_cast<ptrdiff_t>(idx));
    r.status = RequestStatus::kRunning;
    running_.push_back(r.id);
    add(r, n);
  }
  return batch->size();
}

void Scheduler::Commit(SimTime now, const std::vector<ScheduledSeq>& batch,
                       Recorder* recorder, std::vector<int64_t>* finished) {
  RequestTable& reqs = *requests_;
  bool any_finished = false;
  for (const ScheduledSeq& s : batch) {
    Request& r = reqs[s.id];
    r.num_computed += s.new_tokens;
    if (kv_.prefix_caching()) RegisterFullBlocks(r);
    if (r.num_computed != r.known_tokens()) continue;  // mid-prefill chunk
    // A token is sampled. After a preemption the recomputed tokens were
    // already delivered, so only a genuinely new token counts.
    ++r.num_output;
    if (r.first_token < 0) {
      r.first_token = now;
    } else if (r.measured) {
      recorder->RecordItlNanos(now - r.last_token);
    }
    r.last_token = now;
    if (r.num_output == r.output_len) {
      r.finish = now;
      r.status = RequestStatus::kFinished;
      kv_.Release(r.blocks);
      r.blocks.clear();
      r.blocks.shrink_to_fit();
      r.block_hashes.clear();
      r.block_hashes.shrink_to_fit();
      finished->push_back(r.id);
      any_finished = true;
    }
  }
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
        BlocksFor(r.num_computed, config_.block_size)) {
      std::fprintf(stderr, "servesim: request %lld has too few blocks\n",
                   static_cast<long long>(id));
      std::abort();
    }
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
