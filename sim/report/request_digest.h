// What the run summary needs of the requests, taken one request at a time
// (in id order), so that a run need not keep its requests to the end
// (SimulationInput::keep_requests = false streams them here as they
// retire): counts and token sums as they come, and of each completed
// (measured, finished) request a 48-byte outcome (stored by column), from
// which the latency statistics are computed at the end, one metric at a
// time in one buffer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/time.h"
#include "sim/engine/block_math.h"
#include "sim/engine/request.h"
#include "sim/engine/simulation.h"

namespace servesim {

// A completed request, as the latency statistics and peak concurrency need it.
struct RequestOutcome {
  SimTime arrival, send, first_scheduled, first_token, finish;
  int32_t output_len;
  int32_t request_class;  // -1: none
};
static_assert(sizeof(RequestOutcome) == 48);

// The completed requests' outcomes, append-only, by column: each chunk
// holds 2^16 requests' fields field by field, so a pass over one metric
// reads the two columns it needs (16 bytes a request, in order) rather
// than whole 48-byte records, and its loop vectorises. Never twice the
// memory it holds (a vector past its reservation doubles). It also notes
// what peak concurrency's count needs of all of them (sends in order, the
// finishes' range), so that count skips a pass.
class OutcomeTable {
 public:
  static constexpr int kShift = 16;
  static constexpr size_t kChunk = size_t{1} << kShift;
  struct Chunk {
    SimTime arrival[kChunk], send[kChunk], first_scheduled[kChunk],
        first_token[kChunk], finish[kChunk];
    int32_t output_len[kChunk];
    int32_t request_class[kChunk];
  };

  void push_back(const RequestOutcome& o) {
    const size_t j = size_ & (kChunk - 1);
    if (j == 0) {
      // Not zeroed (no memset of 3 MB a chunk): a slot is written before read.
      chunks_.push_back(std::make_unique_for_overwrite<Chunk>());
    }
    Chunk& c = *chunks_.back();
    c.arrival[j] = o.arrival;
    c.send[j] = o.send;
    c.first_scheduled[j] = o.first_scheduled;
    c.first_token[j] = o.first_token;
    c.finish[j] = o.finish;
    c.output_len[j] = o.output_len;
    c.request_class[j] = o.request_class;
    sends_in_order_ &= size_ == 0 || last_send_ <= o.send;
    last_send_ = o.send;
    min_finish_ = std::min(min_finish_, o.finish);
    max_finish_ = std::max(max_finish_, o.finish);
    ++size_;
  }
  RequestOutcome operator[](size_t i) const {
    const Chunk& c = *chunks_[i >> kShift];
    const size_t j = i & (kChunk - 1);
    return {c.arrival[j],     c.send[j],       c.first_scheduled[j], c.first_token[j],
            c.finish[j],      c.output_len[j], c.request_class[j]};
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { *this = OutcomeTable(); }

  size_t num_chunks() const { return chunks_.size(); }
  const Chunk& chunk(size_t k) const { return *chunks_[k]; }
  // Requests in chunk k.
  size_t chunk_size(size_t k) const { return std::min(kChunk, size_ - (k << kShift)); }
  // Calls f(chunk, count) for each chunk in order.
  template <typename F>
  void ForEachChunk(F f) const {
    for (size_t k = 0; k < chunks_.size(); ++k) f(*chunks_[k], chunk_size(k));
  }

  // Every send at or after the one before it (in push order).
  bool sends_in_order() const { return sends_in_order_; }
  SimTime min_finish() const { return min_finish_; }  // kNever if empty
  SimTime max_finish() const { return max_finish_; }  // INT64_MIN if empty

 private:
  std::vector<std::unique_ptr<Chunk>> chunks_;
  size_t size_ = 0;
  bool sends_in_order_ = true;
  SimTime last_send_ = 0;
  SimTime min_finish_ = kNever;
  SimTime max_finish_ = std::numeric_limits<SimTime>::min();
};

struct ClassCounts {
  int64_t created = 0, completed = 0, excluded_warmup = 0, rejected = 0,
          failed = 0, unfinished = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t preemptions = 0;
};

class RequestDigest {
 public:
  // For the requests of a run of `in`: with a frontend, latencies end when
  // the client has the token (the engine's time plus output_s).
  explicit RequestDigest(const SimulationInput& in);

  // Every created request, in id order (the order of reject_reasons).
  void Add(const Request& r);

  int64_t created = 0;
  int64_t measured = 0;
  int64_t completed = 0, excluded_warmup = 0, failed = 0;
  int64_t total_input_tokens = 0, total_output_tokens = 0;
  int64_t preemptions = 0, preempted_requests = 0;
  int64_t prompt_tokens_admitted = 0, cached_prompt_tokens = 0;
  int64_t cpu_cached_prompt_tokens = 0;  // of those, from the CPU tier
  int64_t prompt_full_blocks = 0, cached_blocks = 0;
  SimTime first_arrival = kNever, last_finish = 0;    // of completed ones
  SimTime first_measured = kNever, last_measured = 0;  // measured arrivals
  bool slot_waits = false;  // a completed request waited for a slot
  std::vector<std::string> reject_reasons;  // distinct, first seen first
  std::vector<ClassCounts> classes;         // workload.classes order
  OutcomeTable outcomes;                    // completed, in id order
  // Arrivals of measured requests neither finished nor rejected (the run
  // stopped first), for the backlog (arrival_window.h).
  std::vector<SimTime> unfinished_arrivals;
  // With a frontend, per completed request (outcome order): from its send
  // to the engine core having it. (Its TTFT as the engine sees it follows:
  // the client's less output_s less this wait; see EngineTtfts.)
  bool frontend = false;
  std::vector<SimTime> api_waits;
  // The completed requests' TTFTs as the engine sees them (outcome order).
  std::vector<SimTime> EngineTtfts() const;

 private:
  BlockMath blocks_;  // (a shift, not two divisions a request)
  SimTime client_lag_ = 0;
};

}  // namespace servesim
