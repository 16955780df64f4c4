// Recorder: what the run measures beyond per-request timestamps.
//
// Levels (requests in system, waiting, running, KV blocks used, engine
// busy) are integrated over time as piecewise constants: call Advance(now)
// before a level changes. The measurement window is [MarkWindowStart,
// MarkWindowEnd] (first to last measured arrival); time averages and step
// statistics cover that window only, so warm-up is excluded from them as
// from latencies.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/time.h"
#include "sim/metrics/log_histogram.h"

namespace servesim {

struct Levels {
  int64_t in_system = 0;  // sent, not finished
  int64_t waiting = 0;    // in the scheduler's waiting queue
  int64_t running = 0;
  int64_t kv_blocks_used = 0;
  int64_t kv_blocks_cached = 0;  // free but holding a cached prefix block
  int64_t busy = 0;  // 1 while a step executes
};

struct LevelIntegrals {  // level x nanoseconds
  double in_system = 0, waiting = 0, running = 0, kv_blocks_used = 0,
         kv_blocks_cached = 0, busy = 0;
};

struct StepStats {
  int64_t all_steps = 0;    // every step of the run, window or not
  int64_t steps = 0;        // steps that started inside the window
  int64_t seqs = 0;         // sum of batch sizes
  int64_t tokens = 0;       // sum of tokens computed
  int64_t max_batch = 0;
  LogHistogram batch_size;  // distribution of sequences per step
  double flops = 0, hbm_bytes = 0;  // model work of window steps, per GPU
};

class Recorder {
 public:
  // Inline: the driver calls it several times an event, mostly at the
  // instant of the call before (nothing to integrate).
  void Advance(SimTime now) {
    if (now > last_) Integrate(now);
    if (window_open_) {
      max_.in_system = std::max(max_.in_system, levels_.in_system);
      max_.waiting = std::max(max_.waiting, levels_.waiting);
      max_.running = std::max(max_.running, levels_.running);
      max_.kv_blocks_used = std::max(max_.kv_blocks_used, levels_.kv_blocks_used);
    }
  }
  // Samples levels every `interval` from t = 0 (piecewise-constant levels,
  // so a sample is the level in force at its instant).
  Levels& levels() { return levels_; }
  const Levels& levels() const { return levels_; }

  void MarkWindowStart(SimTime now);
  void MarkWindowEnd(SimTime now);
  bool in_window() const { return window_open_; }

  void RecordItlNanos(SimTime gap) { itl_ns_.Add(gap); }
  // `times` equal gaps in a row (one weighted sample; same statistics).
  void RecordItlNanos(SimTime gap, int64_t times) { itl_ns_.Add(gap, times); }
  void RecordStep(int64_t seqs, int64_t tokens);
  // The model FLOPs and HBM bytes (per GPU) of the step just recorded.
  void RecordWork(double flops, double hbm_bytes);
  // One output token of a measured request delivered at `now` (non-
  // decreasing: the event loop's clock). Counted in one-second buckets from
  // the window start, as vllm bench serve's max_output_tokens_per_s counts
  // them from its first request's start; only the current bucket and the
  // largest so far are kept.
  void RecordOutputToken(SimTime now);
  int64_t output_tokens() const { return output_tokens_; }
  int64_t max_output_tokens_per_s() const { return max_tokens_per_s_; }

  const LogHistogram& itl_ns() const { return itl_ns_; }
  const StepStats& steps() const { return steps_; }
  SimTime window_start() const { return window_start_; }
  SimTime window_end() const { return window_end_; }
  // Time averages over the window (0 before it closes).
  LevelIntegrals WindowAverages() const;
  // Maxima seen inside the window.
  const Levels& WindowMax() const { return max_; }

 private:
  void Integrate(SimTime until);

  Levels levels_;
  Levels max_;
  LevelIntegrals total_;            // cumulative since t = 0
  LevelIntegrals at_window_start_;  // snapshot of total_
  LevelIntegrals at_window_end_;
  SimTime last_ = 0;
  SimTime window_start_ = -1, window_end_ = -1;
  bool window_open_ = false;
  LogHistogram itl_ns_;
  StepStats steps_;
  int64_t output_tokens_ = 0;
  int64_t token_bucket_ = -1, tokens_in_bucket_ = 0, max_tokens_per_s_ = 0;
};

}  // namespace servesim
