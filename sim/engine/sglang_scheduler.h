// The scheduling decisions of one SGLang 0.5.23 server, step for step as
// its Scheduler.get_next_batch_to_run, PrefillAdder and
// ScheduleBatch.retract_decode make them, with its radix-tree prefix cache
// (sglang_radix_cache.h), every waiting-queue order
// (sglang_waiting_order.h), any page size and both event loops. Checked
// against golden traces of the real scheduler (tests/conformance/sglang,
// tests/engine/sglang_conformance_test.cc); docs/engine/sglang.md states
// the rules.
//  - Each call first publishes a request's finished middle chunk to the
//    radix tree, merges the last prefill batch into the running batch (less
//    finished requests and the one still being chunked), then tries a
//    prefill (extend) batch; only without one does the running batch
//    decode. Prefill and decode never mix (enable_mixed_chunk off).
//  - Admission: a continuing chunk goes first, then waiting requests in
//    policy order, each matched against the tree (never its whole fill:
//    the extend is at least one token). The KV budget is the free pool plus
//    the evictable tree less, per running request, min(max_new_tokens -
//    generated, 4096) x the new-token ratio (x 1 with ignore_eos); an
//    admitted request takes its page-rounded extend + its capped
//    max_new_tokens + one page and must fit strictly, its match locked.
//    Admission also stops at max_prefill_tokens of extend (without
//    chunking a second request may not reach it), at max_running_requests,
//    and with chunking on at chunked_prefill_size, where the request is cut
//    to a page boundary and continues first next time. The first request
//    that does not fit marks the batch full until a request leaves.
//  - Allocation evicts least recently used tree leaves when the free pool
//    falls short (extend: its tokens, plus a page per request when paged;
//    decode: a token, or a page, per request).
//  - Decode needs a new page for each request at a page boundary (after
//    evicting); short of it, requests are retracted (fewest generated
//    tokens first, ties to the longest prompt, one always kept; the batch
//    keeps that order), their KV freed without caching it, the tree evicted
//    down to 20 tokens per kept request, and the ratio raised
//    (sglang_ratio.h); otherwise it decays.
//  - A finished prefill (or chunk) and a finished request insert their KV
//    into the tree, page-aligned, split at the prompt's end.
//  - Overlap loop: the caller passes the batch whose result is still in
//    flight; a request whose in-flight token is its last sits out of
//    decode, and while such a request holds KV that decode would need,
//    nothing decodes.
// Not modelled: priority scheduling, mixed chunks, hierarchical cache.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_set>
#include <vector>

#include "sim/engine/id_table.h"
#include "sim/engine/sglang_config.h"
#include "sim/engine/sglang_radix_cache.h"
#include "sim/engine/sglang_ratio.h"
#include "sim/engine/sglang_waiting_order.h"

namespace servesim {

struct SglangRequest {
  int64_t id = 0;
  int32_t prompt_len = 0;
  int32_t max_new_tokens = 0;
  bool ignore_eos = false;
  // Its tokens, as the radix tree tells them apart (PromptContent's
  // names): the shared prefix prefix_id (0: none) covers the first
  // prefix_len; the rest, outputs included, is the stream stream_id.
  uint64_t prefix_id = 0;
  int32_t prefix_len = 0;
  uint64_t stream_id = 0;
};

struct SglangBatch {
  struct Row {
    int64_t id;
    int32_t extend;  // tokens computed this batch (extend only)
    int32_t prefix;  // tokens already held before it
    bool operator==(const Row&) const = default;
  };
  bool extend = false;            // extend (prefill) or decode
  std::vector<Row> rows;          // batch order; decode rows extend 1
  std::vector<int64_t> retracted; // sent back to the waiting queue
  int64_t middle_chunk = -1;      // a request cut mid-prompt: samples nothing
};

class SglangScheduler {
 public:
  explicit SglangScheduler(const SglangConfig& config);

  // A request joins the waiting queue (arrival order).
  void AddWaiting(const SglangRequest& r);

  // One scheduling call. `in_flight`: the batch whose result is not yet
  // processed (overlap loop; null in the normal loop).
  std::optional<SglangBatch> Schedule(const SglangBatch* in_flight);

  // A batch's result: one token per request (none for a middle chunk or a
  // request retracted or finished since). Returns the requests it
  // finished, by id; their KV is freed. With `delivered`, appends the
  // requests that received a token, in batch order.
  std::vector<int64_t> Process(const SglangBatch& batch,
                               std::vector<int64_t>* delivered = nullptr);

  // The client of request `id` went away (SGLang's abort_request): a
  // waiting request leaves the queue now (true); one admitted ends at the
  // next result that names it (Process lists it as finished, its KV cached
  // as a finished request's), having computed what it was given until then
  // (false, also for one already ended).
  bool Abort(int64_t id);

  // Called when a loop iteration ran nothing and processed nothing: with
  // nothing running, waiting or in flight the ratio returns to its start.
  void OnIdle(bool batch_in_flight);

  // Anything left to run: waiting, being chunked, or running unfinished
  // (finished requests leave the running batch at the next call).
  bool has_requests() const;
  // KV in use as SGLang counts it: max_total_tokens less the free pages
  // less the evictable tree (so a pool that is not whole pages counts its
  // remainder as in use).
  int64_t tokens_in_use() const {
    return config_.max_total_tokens - Free() - cache_.evictable_size();
  }
  int64_t evictable_tokens() const { return cache_.evictable_size(); }
  // Tokens the radix tree evicted during the last Schedule call.
  int64_t evicted_tokens() const { return evicted_; }
  // The `random` order's shuffles, SGLang's own draws (never drawn here).
  void set_random_order(SglangWaitingOrder::RandomOrder f) { order_.set_random_order(std::move(f)); }
  double new_token_ratio() const { return ratio_.value(); }
  const SglangConfig& config() const { return config_; }
  // The KV pool in tokens (whole pages) and its page size.
  int64_t pool_tokens() const { return total_; }
  int64_t page_size() const { return page_; }
  // Waiting (retracted ones included; not the request being chunked) and
  // running (the running batch, the last prefill's requests and the one
  // being chunked; finished ones until the next call drops them).
  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const;
  // Aborts unless the pool's count is the sum of what each request holds,
  // within the pool, and the queues hold each request at most once
  // (--check-invariants).
  void CheckInvariants() const;

 private:
  struct State {
    SglangRequest req;
    int32_t out = 0;      // tokens generated (results processed)
    SglangTokens tokens;
    int64_t held = 0;     // tokens whose KV it holds
    int64_t cached = 0;   // of those, the leading ones the tree owns
    int64_t prefix = 0;   // tokens its next extend starts after
    SglangRadixCache::NodeId lock = SglangRadixCache::kRoot;  // tree node it locks
    bool finished = false;
    bool abort = false;      // its client went away: ends at its next result
    bool retracted = false;  // retracted, not yet re-admitted
    bool running = false;    // in running_
    bool admitted = false;   // scratch: admitted by the current Prefill
    bool flying = false;     // scratch: in the batch in flight (Decode)
  };

  // PrefillAdder's budgets for one prefill pass.
  struct Budget {
    double total_off = 0;  // reserved, the running requests' share included
    int64_t cur_off = 0;   // reserved for this batch's extends
    int64_t rem_in = 0;    // max_prefill_tokens left
    int64_t rem_chunk = 0; // chunked_prefill_size left
  };
  enum class Add { kContinue, kNoToken, kOther };

  std::optional<SglangBatch> Prefill();
  void OrderWaiting();
  Budget StartBudget() const;
  Add BudgetState(const Budget& g) const;
  void Reserve(Budget* g, int64_t ext, int64_t max_new) const;
  void ContinueChunk(Budget* g, SglangBatch* b);
  // Admits waiting requests in order; returns the one cut into a chunk, or -1.
  int64_t AdmitWaiting(Budget* g, SglangBatch* b, int64_t rows_free);
  void AllocateExtend(const SglangBatch& b);
  std::optional<SglangBatch> Decode(const SglangBatch* in_flight);
  void Retract(std::vector<int64_t>* order, SglangBatch* b);
  bool DecodeFits(const std::vector<int64_t>& ids);
  // n rounded up to whole pages, and whether n ends on a page boundary
  // (masks for the usual power-of-two pages: these run per request per
  // step, where a 64-bit division is most of the cost).
  int64_t Ceil(int64_t n) const {
    return page_mask_ >= 0 ? (n + page_mask_) & ~page_mask_ : (n + page_ - 1) / page_ * page_;
  }
  bool OnBoundary(int64_t n) const {
    return page_mask_ >= 0 ? (n & page_mask_) == 0 : n % page_ == 0;
  }
  // The allocator's free pool: not held by requests, not in the tree.
  int64_t Free() const {
    return total_ - own_ - cache_.evictable_size() - cache_.protected_size();
  }
  // What admission may count on: free plus evictable.
  int64_t Available() const { return Free() + cache_.evictable_size(); }
  // evict_to_free_tokens: evicts when the free pool is short of `tokens`.
  void EvictFor(int64_t tokens);
  void SetHeld(State& s, int64_t held, int64_t cached);
  void SetHeld(State& s, int64_t held) { SetHeld(s, held, s.cached); }
  // RadixCache.checkpoint: the first `up_to` tokens go into the tree (whole
  // pages) and the request locks them instead of holding them.
  void Checkpoint(State& s, int64_t up_to);
  // release_kv_cache: frees what it holds, caching it first if asked.
  void Release(State& s, bool cache_it);
  int64_t FillLen(const State& s) const { return s.req.prompt_len + s.out; }
  int64_t DecodeNeed(const std::vector<int64_t>& ids) const;

  SglangConfig config_;
  int64_t page_;
  int64_t page_mask_;  // page_ - 1 for a power of two, else -1
  int64_t total_;  // pool, whole pages
  SglangRatio ratio_;
  SglangRadixCache cache_;
  SglangWaitingOrder order_;
  IdTable<State> state_;  // by request id (a lookup per request per step)
  std::vector<int64_t> waiting_, running_, last_extend_;
  int64_t chunked_ = -1;  // the request being chunked
  bool full_ = false;     // admission stopped for lack of KV or rows
  int64_t own_ = 0;       // sum of page-rounded held less cached
  int64_t evicted_ = 0;   // during the current Schedule call
  // Finished at the last Process: a batch in flight may still name them;
  // their state is dropped at the end of the next Process.
  std::vector<int64_t> retiring_;
};

}  // namespace servesim
