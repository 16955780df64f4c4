// The scheduler's full invariant check (run after every step with
// --check-invariants and in tests): every block owned exactly once, the
// CPU tier's swap space matching the swapped requests, counts agreeing.
#include <vector>

#include "sim/core/check.h"
#include "sim/engine/scheduler.h"
#include "sim/kv/prefix_cache.h"

namespace servesim {

void Scheduler::CheckCpuTier() const {
  const RequestTable& reqs = *requests_;
  int64_t swap = 0;
  waiting_.ForEach([&](int64_t id) {
    const Request& r = reqs[id];
    const int32_t want = r.swapped_tokens > 0 ? blocks_.Blocks(r.swapped_tokens) : 0;
    SERVESIM_CHECK(r.swap_blocks == want && (r.swap_blocks == 0 || kvm_.cpu_tier() != nullptr),
                   "waiting request %lld holds %d CPU blocks for %d swapped tokens",
                   static_cast<long long>(id), r.swap_blocks, r.swapped_tokens);
    swap += r.swap_blocks;
  });
  for (int64_t id : running_) {
    SERVESIM_CHECK(reqs[id].swap_blocks == 0 && reqs[id].swapped_tokens == 0,
                   "running request %lld is still swapped out", static_cast<long long>(id));
  }
  const CpuTier* cpu = kvm_.cpu_tier();
  if (cpu == nullptr) return;
  cpu->CheckInvariants();
  SERVESIM_CHECK(swap == cpu->swap_used(),
                 "CPU tier holds %lld swap blocks, waiting requests %lld",
                 static_cast<long long>(cpu->swap_used()), static_cast<long long>(swap));
  SERVESIM_CHECK(kvm_.pending_spills() == 0, "%zu evicted blocks not offered to the CPU tier",
                 kvm_.pending_spills());
}

void Scheduler::CheckRunning(const Request& r) const {
  SERVESIM_CHECK(r.status == RequestStatus::kRunning,
                 "request %lld in running list is not running", static_cast<long long>(r.id));
  SERVESIM_CHECK(static_cast<int64_t>(r.blocks.size()) >= blocks_.Blocks(r.num_computed),
                 "request %lld has too few blocks", static_cast<long long>(r.id));
  SERVESIM_CHECK(r.num_output <= r.output_len && r.num_computed <= r.total_len(),
                 "request %lld overran its length", static_cast<long long>(r.id));
  // Speculative decoding (synchronous): after a step, no rejected draft is
  // left in the KV cache -- only known tokens are computed, and the blocks
  // cover exactly them.
  SERVESIM_CHECK(!config_.spec.on() ||
                     (r.num_computed < r.known_tokens() &&
                      static_cast<int32_t>(r.blocks.size()) == blocks_.Blocks(r.num_computed)),
                 "request %lld keeps draft KV: %d computed of %d known, %d blocks",
                 static_cast<long long>(r.id), r.num_computed, r.known_tokens(),
                 r.blocks.size());
}

void Scheduler::CheckInvariants() const {
  const KvCache& kv = kvm_.cache();
  kv.CheckInvariants();
  CheckCpuTier();
  const BlockPool& pool = kv.pool();
  const PrefixCache* fast = kv.fast();
  // Distinct blocks held. Anonymous blocks (a counted pool's, PrefixCache's
  // unhashed ones) have one holder each, so the holders' counts must sum
  // to the pool's used count: a block released while still held (a double
  // release) breaks that. PrefixCache's shared runs: one reference per
  // holder, the run's on each of its blocks while it has holders.
  std::vector<int32_t> owners(
      fast ? fast->num_blocks() : (pool.counted() ? 0 : pool.num_blocks()), 0);
  std::vector<int32_t> run_holders(fast ? fast->num_runs() : 0, 0);
  int64_t held = 0;
  const auto own = [&](const BlockList& l) {
    SERVESIM_CHECK(fast || (pool.counted() ? l.ids().empty() : l.counted() == 0),
                   "a block list of the wrong kind (%zu ids, %d counted)", l.ids().size(),
                   l.counted());
    SERVESIM_CHECK(l.run() < 0 || (fast && l.run() < fast->num_runs() &&
                                   l.run_len() == fast->run_len(l.run())),
                   "a block list holds a bad run %d", l.run());
    held += l.counted();
    for (int32_t b : l.ids()) held += owners[b]++ == 0;
    if (l.run() >= 0) ++run_holders[l.run()];
  };
  for (int64_t id : running_) {
    const Request& r = (*requests_)[id];
    CheckRunning(r);
    own(r.blocks);
  }
  group_.CheckInvariants(own);
  for (int64_t id : held_) {
    const Request& r = (*requests_)[id];
    SERVESIM_CHECK(r.status == RequestStatus::kFinished,
                   "held request %lld is not finished", static_cast<long long>(id));
    own(r.blocks);
  }
  size_t waiting = 0;
  waiting_.ForEach([&](int64_t id) {
    SERVESIM_CHECK((*requests_)[id].blocks.empty(), "waiting request %lld holds blocks",
                   static_cast<long long>(id));
    ++waiting;
  });
  SERVESIM_CHECK(waiting == waiting_.size(), "waiting queue of %zu requests counts %zu",
                 waiting, waiting_.size());
  for (int32_t run = 0; run < static_cast<int32_t>(run_holders.size()); ++run) {
    SERVESIM_CHECK(run_holders[run] == fast->run_holders(run),
                   "shared run %d held %d times, says %d", run, run_holders[run],
                   fast->run_holders(run));
    if (run_holders[run] == 0) continue;
    for (int32_t b : fast->run_blocks(run)) held += owners[b]++ == 0;
  }
  std::vector<int32_t> refs;
  if (fast) {
    for (int32_t b = 0; b < fast->num_blocks(); ++b) refs.push_back(fast->ref_count(b));
  } else if (!pool.counted()) {
    refs = pool.RefCounts();
  }
  for (int32_t b = 0; b < static_cast<int32_t>(refs.size()); ++b) {
    SERVESIM_CHECK(owners[b] == refs[b], "block %d owned %d times, ref_count %d", b,
                   owners[b], refs[b]);
  }
  SERVESIM_CHECK(held == kv.num_used(), "%lld blocks held, pool says %d used",
                 static_cast<long long>(held), kv.num_used());
}

}  // namespace servesim
