// The scheduler's full invariant check (run after every step with
// --check-invariants and in tests): every block owned exactly once, the
// CPU tier's swap space matching the swapped requests, counts agreeing.
#include <vector>

#include "sim/core/check.h"
#include "sim/engine/scheduler.h"

namespace servesim {

void Scheduler::CheckCpuTier() const {
  const RequestTable& reqs = *requests_;
  int64_t swap = 0;
  waiting_.ForEach([&](int64_t id) {
    const Request& r = reqs[id];
    const int32_t want = r.swapped_tokens > 0 ? blocks_.Blocks(r.swapped_tokens) : 0;
    SERVESIM_CHECK(r.swap_blocks == want && (r.swap_blocks == 0 || cpu_ != nullptr),
                   "waiting request %lld holds %d CPU blocks for %d swapped tokens",
                   static_cast<long long>(id), r.swap_blocks, r.swapped_tokens);
    swap += r.swap_blocks;
  });
  for (int64_t id : running_) {
    SERVESIM_CHECK(reqs[id].swap_blocks == 0 && reqs[id].swapped_tokens == 0,
                   "running request %lld is still swapped out", static_cast<long long>(id));
  }
  if (cpu_ == nullptr) return;
  cpu_->CheckInvariants();
  SERVESIM_CHECK(swap == cpu_->swap_used(),
                 "CPU tier holds %lld swap blocks, waiting requests %lld",
                 static_cast<long long>(cpu_->swap_used()), static_cast<long long>(swap));
  SERVESIM_CHECK(evicted_.empty(), "%zu evicted blocks not offered to the CPU tier",
                 evicted_.size());
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
  kv_.CheckInvariants();
  CheckCpuTier();
  const BlockPool& pool = kv_.pool();
  // Distinct blocks held. A counted pool's blocks have one holder each, so
  // the holders' counts must sum to the pool's used count: a block
  // released while still held (a double release) breaks that.
  std::vector<int32_t> owners(pool.counted() ? 0 : pool.num_blocks(), 0);
  int64_t held = 0;
  const auto own = [&](const BlockList& l) {
    SERVESIM_CHECK(pool.counted() ? l.ids().empty() : l.counted() == 0,
                   "a block list of the wrong kind (%zu ids, %d counted)", l.ids().size(),
                   l.counted());
    held += l.counted();
    for (int32_t b : l.ids()) held += owners[b]++ == 0;
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
  waiting_.ForEach([&](int64_t id) {
    SERVESIM_CHECK((*requests_)[id].blocks.empty(), "waiting request %lld holds blocks",
                   static_cast<long long>(id));
  });
  const std::vector<int32_t> refs =
      pool.counted() ? std::vector<int32_t>() : pool.RefCounts();
  for (int32_t b = 0; b < static_cast<int32_t>(refs.size()); ++b) {
    SERVESIM_CHECK(owners[b] == refs[b], "block %d owned %d times, ref_count %d", b,
                   owners[b], refs[b]);
  }
  SERVESIM_CHECK(held == pool.num_used(), "%lld blocks held, pool says %d used",
                 static_cast<long long>(held), pool.num_used());
}

}  // namespace servesim
