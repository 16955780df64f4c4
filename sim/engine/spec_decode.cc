// Speculative decoding's acceptance draws (see spec_decode.h).
#include "sim/engine/spec_decode.h"

#include <algorithm>
#include <cmath>

#include "sim/core/rng.h"

namespace servesim {
namespace {

// splitmix64's finaliser: a bijective mix of 64 bits.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A request's key for its draws: the seed and its id mixed.
uint64_t DrawKey(uint64_t seed, int64_t id) {
  const uint64_t h = Mix(seed ^ 0x5bd1e9955bd1e995ULL);
  return Mix(h ^ (static_cast<uint64_t>(id) + 0x9e3779b97f4a7c15ULL));
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
  return SpecMemberDraws::For(c, id, rate).Accepted(first, drafts);
}

SpecMemberDraws SpecMemberDraws::For(const SpecDecodeConfig& c, int64_t id, double rate) {
  const double t = std::clamp(std::ceil(rate * 0x1.0p15), 0.0, 0x1.0p15);
  const uint64_t lane = 0x8000 + static_cast<uint64_t>(t) - 1;
  return {.key = DrawKey(c.seed, id), .bias = lane * 0x0001000100010001ULL};
}

}  // namespace servesim
