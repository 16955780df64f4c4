// Repeated floating-point addition in closed form (see repeated_sum.h).
//
// While s stays in one binade [2^(e-1), 2^e) the grid step is u = 2^(e-53)
// and s is a multiple of it, so rounding s + y to nearest adds the same
// whole number of steps d every time: round(y / u) — except at an exact
// tie (y / u ending in .5), which rounds to even and so depends on s. The
// additions whose exact sum stays below 2^e are done at once; the one that
// crosses into the next binade, ties, and additions to s < 1 or s <= y are
// done one at a time, as the loop does them.
#include "sim/metrics/repeated_sum.h"

#include <algorithm>
#include <cmath>

namespace servesim {

double RepeatedSum(double s, double y, int64_t n) {
  constexpr int64_t kTop = int64_t{1} << 53;  // 2^e in units of u
  while (n > 0) {
    if (y == 0) return s;
    if (!(s >= 1.0) || y >= s) {
      s += y;
      --n;
      continue;
    }
    int e = 0;
    std::frexp(s, &e);                      // s in [2^(e-1), 2^e)
    const double q = std::ldexp(y, 53 - e);  // y / u, exact (power of two)
    const double whole = std::floor(q);
    const double frac = q - whole;
    if (frac == 0.5) {  // tie: rounds to even, depends on s
      s += y;
      --n;
      continue;
    }
    const int64_t d = static_cast<int64_t>(whole) + (frac > 0.5 ? 1 : 0);
    if (d == 0) return s;  // y below half a step: s never moves
    const int64_t m = static_cast<int64_t>(std::ldexp(s, 53 - e));  // s / u
    // Addition j (from 0) stays in the binade while m + j d + y/u < 2^53.
    const int64_t limit = kTop - 1 - static_cast<int64_t>(whole);
    if (m > limit) {
      s += y;
      --n;
      continue;
    }
    const int64_t k = std::min(n, (limit - m) / d + 1);
    s = std::ldexp(static_cast<double>(m + k * d), e - 53);  // <= 2^e, exact
    n -= k;
  }
  return s;
}

}  // namespace servesim
