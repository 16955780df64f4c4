// Speculative decoding's acceptance draws (see spec_decode.h).
#include "sim/engine/spec_decode.h"

#include <cmath>

#include "sim/core/rng.h"

namespace servesim {
namespace {

using spec_detail::Mix;

// A request's key for its draws: the seed and its id mixed.
uint64_t DrawKey(uint64_t seed, int64_t id) {
  const uint64_t h = Mix(seed ^ 0x5bd1e9955bd1e995ULL);
  return Mix(h ^ (static_cast<uint64_t>(id) + 0x9e3779b97f4a7c15ULL));
}

// Uniform in [0, 1) for (seed, request, position), 53 bits.
double Uniform(uint64_t seed, int64_t id, int32_t position) {
  return static_cast<double>(spec_detail::DrawHash(DrawKey(seed, id), position) >> 11) *
         0x1.0p-53;
}

}  // namespace

double SpecAcceptanceRate(const SpecDecodeConfig& c, int64_t id) {
  if (c.beta_a <= 0) return c.acceptance_rate;
  Rng rng(Mix(c.seed ^ Mix(static_cast<uint64_t>(id))), "spec_acceptance");
  const double x = rng.Gamma(c.beta_a, 1.0);
  const double y = rng.Gamma(c.beta_b, 1.0);
  return x + y > 0 ? x / (x + y) : 0.5;
}

int32_t SpecAcceptedDrafts(const SpecDecodeConfig& c, int64_t id, double rate,
                           int32_t first, int32_t drafts) {
  int32_t a = 0;
  while (a < drafts && Uniform(c.seed, id, first + a) < rate) ++a;
  return a;
}

SpecMemberDraws SpecMemberDraws::For(const SpecDecodeConfig& c, int64_t id, double rate) {
  return {.key = DrawKey(c.seed, id),
          .threshold = static_cast<uint64_t>(std::ceil(rate * 0x1.0p53))};
}

}  // namespace servesim
