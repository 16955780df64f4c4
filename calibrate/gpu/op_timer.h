// Timing of one operation on the device: CUDA events around each
// repetition, warm-up first, median and p10/p90 over many repetitions, and a
// CUDA graph of several launches when one launch is so short that launch
// gaps would dominate. The caller's launch(i) should rotate among input sets
// (i is the repetition counter) so repeated runs do not measure the L2.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace servesim::calibrate::gpu {

struct TimingStats {
  double median_s = 0, p10_s = 0, p90_s = 0;
  int repetitions = 0;
};

// Launches asynchronously on `stream` (must not be the legacy default
// stream, so it can be captured). Runs at least 5 and at most 200 timed
// repetitions, stopping once budget_s of wall time is spent. may_capture =
// false when launch() itself launches a graph (never nest captures).
TimingStats TimeOnStream(const std::function<void(int)>& launch,
                         cudaStream_t stream, double budget_s,
                         bool may_capture = true);

}  // namespace servesim::calibrate::gpu
