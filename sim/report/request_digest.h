// What the run summary needs of the requests, taken one request at a time
// (in id order), so that a run need not keep its requests to the end
// (SimulationInput::keep_requests = false streams them here as they
// retire): counts and token sums as they come, and of each completed
// (measured, finished) request a 48-byte outcome, from which the latency
// statistics are computed at the end, one metric at a time in one buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/time.h"
#include "sim/engine/request.h"

namespace servesim {

// A completed request, as the latency statistics and peak concurrency need it.
struct RequestOutcome {
  SimTime arrival, send, first_scheduled, first_token, finish;
  int32_t output_len;
  int32_t request_class;  // -1: none
};
static_assert(sizeof(RequestOutcome) == 48);

// Append-only storage in fixed chunks: no copy, and never twice the memory
// it holds (a vector past its reservation doubles).
template <typename T, int kShift = 16>
class ChunkedVector {
 public:
  void push_back(const T& v) {
    if ((size_ >> kShift) == chunks_.size()) {
      // Not zeroed (no memset of 3 MB a chunk): a slot is written before read.
      chunks_.push_back(std::make_unique_for_overwrite<T[]>(size_t{1} << kShift));
    }
    chunks_[size_ >> kShift][size_ & kMask] = v;
    ++size_;
  }
  T& operator[](size_t i) { return chunks_[i >> kShift][i & kMask]; }
  const T& operator[](size_t i) const { return chunks_[i >> kShift][i & kMask]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    chunks_.clear();
    size_ = 0;
  }

 private:
  static constexpr size_t kMask = (size_t{1} << kShift) - 1;
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

struct ClassCounts {
  int64_t created = 0, completed = 0, excluded_warmup = 0, rejected = 0,
          failed = 0, unfinished = 0;
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t preemptions = 0;
};

class RequestDigest {
 public:
  RequestDigest(int32_t block_size, size_t num_classes)
      : classes(num_classes), block_size_(block_size) {}

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
  ChunkedVector<RequestOutcome> outcomes;   // completed, in id order

 private:
  int32_t block_size_;
};

}  // namespace servesim
