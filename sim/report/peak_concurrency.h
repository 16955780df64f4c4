// The most completed requests in flight at one instant (the summary's
// max_concurrent_requests).
#pragma once

#include <cstdint>

#include "sim/report/request_digest.h"

namespace servesim {

// The most requests whose [send, finish) intervals overlap at one instant;
// at an instant with both, finishes come before sends.
int64_t PeakConcurrency(const OutcomeTable& done);

// The same by sorting the send and finish times and merging them (the
// reference the test compares with).
int64_t PeakConcurrencyBySorting(const OutcomeTable& done);

}  // namespace servesim
