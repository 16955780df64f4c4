// Recorder: time integrals of levels and step statistics (see recorder.h).
#include "sim/metrics/recorder.h"

#include <algorithm>

namespace servesim {

void Recorder::Integrate(SimTime until) {
  const double dt = static_cast<double>(until - last_);
  if (dt > 0) {
    total_.in_system += levels_.in_system * dt;
    total_.waiting += levels_.waiting * dt;
    total_.running += levels_.running * dt;
    total_.kv_blocks_used += levels_.kv_blocks_used * dt;
    total_.kv_blocks_cached += levels_.kv_blocks_cached * dt;
    total_.busy += levels_.busy * dt;
    last_ = until;
  }
}

void Recorder::MarkWindowStart(SimTime now) {
  Integrate(now);
  at_window_start_ = total_;
  window_start_ = now;
  window_open_ = true;
  max_ = levels_;
}

void Recorder::MarkWindowEnd(SimTime now) {
  Advance(now);
  at_window_end_ = total_;
  window_end_ = now;
  window_open_ = false;
}

void Recorder::RecordStep(int64_t seqs, int64_t tokens) {
  ++steps_.all_steps;
  if (!window_open_) return;
  ++steps_.steps;
  steps_.seqs += seqs;
  steps_.tokens += tokens;
  steps_.max_batch = std::max(steps_.max_batch, seqs);
  steps_.batch_size.Add(seqs);
}

void Recorder::RecordWork(double flops, double hbm_bytes) {
  if (!window_open_) return;
  steps_.flops += flops;
  steps_.hbm_bytes += hbm_bytes;
}

void Recorder::RecordOutputToken(SimTime now) {
  ++output_tokens_;
  const int64_t bucket = (now - std::max<SimTime>(0, window_start_)) / kNanosPerSecond;
  if (bucket != token_bucket_) {
    token_bucket_ = bucket;
    tokens_in_bucket_ = 0;
  }
  max_tokens_per_s_ = std::max(max_tokens_per_s_, ++tokens_in_bucket_);
}

LevelIntegrals Recorder::WindowAverages() const {
  LevelIntegrals avg;
  const double span = static_cast<double>(window_end_ - window_start_);
  if (window_end_ < 0 || span <= 0) return avg;
  avg.in_system = (at_window_end_.in_system - at_window_start_.in_system) / span;
  avg.waiting = (at_window_end_.waiting - at_window_start_.waiting) / span;
  avg.running = (at_window_end_.running - at_window_start_.running) / span;
  avg.kv_blocks_used =
      (at_window_end_.kv_blocks_used - at_window_start_.kv_blocks_used) / span;
  avg.kv_blocks_cached =
      (at_window_end_.kv_blocks_cached - at_window_start_.kv_blocks_cached) / span;
  avg.busy = (at_window_end_.busy - at_window_start_.busy) / span;
  return avg;
}

}  // namespace servesim
