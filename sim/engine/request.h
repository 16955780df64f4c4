// Per-request state, stored contiguously and indexed by request id.
//
// Token accounting follows vLLM v1: a request "knows" prompt_len + num_output
// tokens; num_computed of them have KV in the cache. Each step computes some
// of the rest; when num_computed reaches the known count the step samples the
// next output token. After a recompute preemption num_computed drops to 0 and
// the prompt plus the output so far is prefilled again.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/time.h"
#include "sim/kv/block_list.h"
#include "sim/workload/prompt_content.h"

namespace servesim {

enum class RequestStatus : uint8_t {
  kPending,   // created but not yet sent to the server (max_concurrency wait)
  kWaiting,   // in the scheduler's waiting queue
  kRunning,   // holds KV blocks, scheduled each step
  kFinished,
  kRejected,  // can never be served (reason in reject_reason)
  kAborted,   // its client went away (serve): ended with the tokens it had
};

// Fields the scheduler touches every step come first, so a decoding
// request costs one or two cache lines per step.
struct Request {
  // Timestamps; -1 until they happen.
  SimTime first_scheduled = -1;  // first step that computed any of its tokens
  SimTime first_token = -1;
  SimTime last_token = -1;
  int32_t prompt_len = 0;
  int32_t output_len = 0;
  int32_t num_computed = 0;  // advanced when a step is scheduled (as vLLM)
  int32_t num_output = 0;    // tokens delivered
  // Async scheduling: tokens scheduled for sampling but not delivered yet
  // (vLLM num_output_placeholders), tokens of steps still in flight, and of
  // those the ones whose output arrives after a preemption (stale: still
  // delivered, but they no longer advance the reset counters).
  int32_t placeholders = 0;
  int32_t in_flight = 0;
  int32_t stale = 0;
  int32_t num_registered = 0;  // leading blocks registered in prefix cache
  RequestStatus status = RequestStatus::kPending;
  bool measured = true;        // false for warm-up requests
  // Speculative decoding (in the padding here): drafts exist for its next
  // step (it sampled in its last step: the proposer ran on it); the most
  // tokens one step delivered to it (<= k + 1 <= 65).
  bool spec_ready = false;
  uint8_t max_delivered = 0;
  int32_t cached_tokens = -1;  // prompt tokens served from the prefix cache
                               // at the first admission; -1 before it
                               // (here: fills the line's padding)
  BlockList blocks;  // KV blocks held, in sequence order (ids or a count)
  int64_t id = 0;
  int64_t run_key = 0;  // admission order: the running queue is sorted on it

  SimTime arrival = -1;  // intended send time (open-loop schedule)
  SimTime send = -1;     // actually sent to the server
  SimTime engine_arrival = -1;  // the engine core has it (frontend: after
                                // the API server; else its send)
  SimTime tokenize_start = -1;  // frontend: its tokenization (its batch's)
                                // began
  SimTime finish = -1;
  // serve: when its client went away (-1: it did not). vLLM ends such a
  // request at once; SGLang at the next result that names it.
  SimTime abort_at = -1;
  const char* reject_reason = nullptr;  // static string
  int32_t client = -1;   // closed-loop client, -1 for open loop
  int32_t replica = -1;  // where the router sent it
  int32_t preemptions = 0;
  int32_t session_turn = 0;  // multi-turn sessions: 0-based turn
  // Request classes (workload.classes): its class (-1 without classes),
  // vLLM priority (lower first) and TTFT SLO (ns, -1: none), copied from
  // the class for the policies that order by them.
  int32_t request_class = -1;
  int32_t priority = 0;
  SimTime ttft_slo = -1;
  // KV offload (engine.kv_offload). Swapped out (engine.preemption swap):
  // the tokens whose KV the CPU tier holds for it and the blocks they take
  // there; 0 when not swapped out.
  int32_t swapped_tokens = 0;
  int32_t swap_blocks = 0;
  // Of cached_tokens, those loaded from the CPU tier's prefix blocks.
  int32_t cpu_cached_tokens = 0;

  // Speculative decoding: its per-draft-token acceptance rate (-1 until
  // drawn) and the steps that delivered its tokens.
  float spec_rate = -1;
  int32_t deliveries = 0;

  // Prefix caching.
  PromptContent content;
  std::vector<uint64_t> block_hashes;  // chained, of full blocks, lazily

  int32_t known_tokens() const { return prompt_len + num_output; }
  int32_t total_len() const { return prompt_len + output_len; }
  // Most tokens this request ever holds in the KV cache: the last sampled
  // token is never fed back.
  int32_t max_cached_tokens() const { return prompt_len + output_len - 1; }
  bool done() const {
    return status == RequestStatus::kFinished ||
           status == RequestStatus::kRejected || status == RequestStatus::kAborted;
  }
};

// Requests by id, in chunks of 1024 (about 240 KiB): a reference stays
// valid while the table grows (no copy, and never twice the memory it
// holds, as a vector past its reservation), and a run that does not keep
// its requests frees each chunk once its requests are done
// (SimulationInput::keep_requests). A chunk's storage is raw: a request is
// constructed in place when it is added (not value-initialised 1024 at a
// time, then overwritten by a moved copy), and a released chunk's storage
// is kept for the next one (no page faults for each new chunk).
class RequestTable {
 public:
  static constexpr int kShift = 10;
  static constexpr size_t kChunk = size_t{1} << kShift;

  RequestTable() = default;
  explicit RequestTable(size_t n) { resize(n); }
  RequestTable(std::initializer_list<Request> list) { assign(list); }
  RequestTable& operator=(std::initializer_list<Request> list) {
    assign(list);
    return *this;
  }
  RequestTable(const RequestTable& o) { *this = o; }
  RequestTable& operator=(const RequestTable& o) {
    if (this == &o) return *this;
    clear();
    for (size_t i = 0; i < o.size_; ++i) push_back(o[i]);
    return *this;
  }
  RequestTable(RequestTable&& o) noexcept { swap(o); }
  RequestTable& operator=(RequestTable&& o) noexcept {
    RequestTable(std::move(o)).swap(*this);
    return *this;
  }
  ~RequestTable() {
    clear();
    for (Request* c : spare_) Free(c);
  }

  Request& operator[](size_t id) { return chunks_[id >> kShift][id & (kChunk - 1)]; }
  const Request& operator[](size_t id) const {
    return chunks_[id >> kShift][id & (kChunk - 1)];
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Request& back() { return (*this)[size_ - 1]; }
  const Request& back() const { return (*this)[size_ - 1]; }
  Request& front() { return (*this)[0]; }
  const Request& front() const { return (*this)[0]; }

  // A default request at the end, constructed in place. Default- rather
  // than value-initialised: every member has its initializer, so the values
  // are the same, without first zeroing all 240 bytes (a `rep stos`, 40% of
  // Driver::Create's time).
  Request& emplace_back() {
    Request* slot = Slot();
    new (slot) Request;
    ++size_;
    return *slot;
  }
  Request& push_back(Request r) {
    Request* slot = Slot();
    new (slot) Request(std::move(r));
    ++size_;
    return *slot;
  }
  void resize(size_t n) {
    while (size_ > n) {
      --size_;
      Request* c = chunks_.back();
      if (c != nullptr) c[size_ & (kChunk - 1)].~Request();
      if ((size_ & (kChunk - 1)) == 0) {  // the last chunk is empty
        chunks_.pop_back();
        if (c != nullptr) Recycle(c);
      }
    }
    while (size_ < n) emplace_back();
  }
  void reserve(size_t n) { chunks_.reserve((n + kChunk - 1) >> kShift); }
  void clear() {
    for (size_t c = 0; c < chunks_.size(); ++c) ReleaseChunk(c);
    chunks_.clear();
    size_ = 0;
  }
  // Frees chunk c (requests [c * kChunk, (c + 1) * kChunk)); they must not
  // be used again. size() is unchanged.
  void ReleaseChunk(size_t c) {
    Request* chunk = chunks_[c];
    if (chunk == nullptr) return;
    const size_t first = c << kShift, last = std::min(size_, first + kChunk);
    for (size_t i = first; i < last; ++i) chunk[i - first].~Request();
    chunks_[c] = nullptr;
    Recycle(chunk);
  }

  template <typename Table, typename Value>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Request;
    using difference_type = std::ptrdiff_t;
    using pointer = Value*;
    using reference = Value&;
    Iter() = default;
    Iter(Table* t, size_t i) : t_(t), i_(i) {}
    Value& operator*() const { return (*t_)[i_]; }
    Value* operator->() const { return &(*t_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    Iter operator++(int) {
      Iter old = *this;
      ++i_;
      return old;
    }
    bool operator==(const Iter& o) const { return i_ == o.i_; }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }

   private:
    Table* t_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iter<RequestTable, Request>;
  using const_iterator = Iter<const RequestTable, const Request>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  // Storage for the request at size_ (a new chunk when the last is full).
  Request* Slot() {
    if ((size_ >> kShift) == chunks_.size()) {
      Request* c;
      if (spare_.empty()) {
        c = static_cast<Request*>(::operator new(kChunk * sizeof(Request)));
      } else {
        c = spare_.back();
        spare_.pop_back();
      }
      chunks_.push_back(c);
    }
    return &chunks_[size_ >> kShift][size_ & (kChunk - 1)];
  }
  void Recycle(Request* c) {
    if (spare_.size() < kMaxSpare) {
      spare_.push_back(c);
    } else {
      Free(c);
    }
  }
  static void Free(Request* c) { ::operator delete(c); }
  void swap(RequestTable& o) noexcept {
    chunks_.swap(o.chunks_);
    spare_.swap(o.spare_);
    std::swap(size_, o.size_);
  }
  void assign(std::initializer_list<Request> list) {
    clear();
    for (const Request& r : list) push_back(r);
  }

  static constexpr size_t kMaxSpare = 4;
  std::vector<Request*> chunks_;  // nullptr: released
  std::vector<Request*> spare_;   // storage of released chunks, for reuse
  size_t size_ = 0;
};

// Removes `ids`, a subsequence of `list` in its order (members joining a
// decode group, listed in the running order), from `list`; false if they
// were not all found in that order.
inline bool EraseSubsequence(std::vector<int64_t>* list, const std::vector<int64_t>& ids) {
  size_t next = 0;
  std::erase_if(*list, [&](int64_t id) {
    if (next == ids.size() || ids[next] != id) return false;
    ++next;
    return true;
  });
  return next == ids.size();
}

}  // namespace servesim
