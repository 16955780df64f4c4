// SGLang's new-token ratio: the share of its remaining max_new_tokens a
// running request is assumed still to need when admission budgets KV
// (SGLang 0.5.23: NewTokenRatioTracker and Scheduler's retraction path).
// It starts at init x schedule_conservativeness (at most 1), falls by a
// fixed step per decode without retraction down to a floor, is raised from
// the kept requests' progress after a retraction, and returns to the start
// when the scheduler is fully idle.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/engine/sglang_config.h"

namespace servesim {

class SglangRatio {
 public:
  // SGLANG_RETRACT_DECODE_STEPS: tokens each kept request is assumed to
  // generate before the next retraction.
  static constexpr int64_t kRetractDecodeSteps = 20;

  explicit SglangRatio(const SglangConfig& c)
      : start_(std::min(c.init_new_token_ratio * c.schedule_conservativeness, 1.0)),
        floor_(std::min(start_ * c.min_new_token_ratio_factor, 1.0)),
        step_((start_ - floor_) / c.new_token_ratio_decay_steps),
        value_(start_) {}

  double value() const { return value_; }
  void Decay() { value_ = std::max(value_ - step_, floor_); }
  void Reset() { value_ = start_; }
  // After retraction: from the kept requests' generated tokens and their
  // total max_new_tokens.
  void AfterRetract(int64_t generated, int64_t kept, int64_t max_new_total) {
    value_ = std::min(1.0, static_cast<double>(generated + kRetractDecodeSteps * kept) /
                               static_cast<double>(max_new_total + 1));
  }

 private:
  double start_, floor_, step_, value_;
};

}  // namespace servesim
