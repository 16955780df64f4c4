// s + y + y + ... + y (n additions) in double precision, rounded after
// every addition exactly as the loop `for (i < n) s += y;` rounds, in
// O(binades crossed) steps instead of O(n). Lets a histogram take one
// weighted sample per run of equal values while its floating-point sums
// stay bit-for-bit what one call per value gives.
#pragma once

#include <cstdint>

namespace servesim {

// Requires s >= 0 and y >= 0, finite. Fast when s >= 1 (the histogram's
// sums of non-negative integers); otherwise it adds one y at a time.
double RepeatedSum(double s, double y, int64_t n);

}  // namespace servesim
