// Speculative decoding's acceptance draws (EngineConfig::spec). Stateless:
// whether the draft for output position p of request r is accepted is a
// function of (seed, r, p) and r's rate alone, so every policy, replica
// count or batch order sees the same acceptances for the same request
// (common random numbers), and a request's rate never depends on when it
// was scheduled.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/engine/engine_config.h"

namespace servesim {

// Speculative decoding counters of one replica (vLLM's spec decode metrics:
// drafts, draft tokens, accepted tokens).
struct SpecDecodeStats {
  int64_t drafts = 0;        // sequence-steps that verified >= 1 draft token
  int64_t draft_tokens = 0;  // draft tokens verified
  int64_t accepted = 0;      // of them, accepted
  double draft_s = 0;        // proposer time priced into the steps
  SpecDecodeStats& operator+=(const SpecDecodeStats& o) {
    drafts += o.drafts;
    draft_tokens += o.draft_tokens;
    accepted += o.accepted;
    draft_s += o.draft_s;
    return *this;
  }
};

// Request `id`'s per-draft-token acceptance rate: the constant, or a draw
// from Beta(beta_a, beta_b) on the request's own stream.
double SpecAcceptanceRate(const SpecDecodeConfig& c, int64_t id);

// Drafts accepted of `drafts` proposed for output positions first,
// first + 1, ...: each accepted with probability `rate`, stopping at the
// first rejection (a geometric count truncated at `drafts`).
int32_t SpecAcceptedDrafts(const SpecDecodeConfig& c, int64_t id, double rate,
                           int32_t first, int32_t drafts);

namespace spec_detail {
// The hash of a request's q-th group of four positions: wyrand's output
// function (Wang Yi's wyhash family) at the request's key advanced q + 1
// times -- one 64x64 -> 128-bit product, folded.
inline uint64_t QuadHash(uint64_t key, int32_t q) {
  const uint64_t s =
      key + (static_cast<uint64_t>(static_cast<uint32_t>(q)) + 1) * 0xa0761d6478bd642fULL;
  const unsigned __int128 m =
      static_cast<unsigned __int128>(s) * static_cast<unsigned __int128>(s ^ 0xe7037ed1a0b428dbULL);
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}
}  // namespace spec_detail

// One request's acceptance draws. The draft for output position p is
// accepted when a 15-bit uniform x(p) < t = ceil(rate * 2^15): a rate
// rounded up by less than 3.1e-5. One hash serves four positions, its four
// 16-bit lanes' low 15 bits (x(4q + i) is lane i of QuadHash(key, q)), and
// the four comparisons run at once on the lanes: with every lane of `bias`
// 0x8000 + t - 1 (0x7fff .. 0xffff), bias - x cannot borrow across lanes
// and has its lane's top bit set exactly when x <= t - 1. Inline: the
// decode groups' loops run it.
struct SpecMemberDraws {
  uint64_t key = 0;   // the seed and the request's id mixed
  uint64_t bias = 0;  // 0x8000 + t - 1 in every 16-bit lane
  static SpecMemberDraws For(const SpecDecodeConfig& c, int64_t id, double rate);
  // Positions 4q .. 4q + 3: bit i set when 4q + i is accepted.
  uint32_t Quad(int32_t q) const {
    const uint64_t h = spec_detail::QuadHash(key, q);
    const uint64_t y = bias - (h & 0x7fff7fff7fff7fffULL);
    // The lanes' top bits (15, 31, 47, 63) gathered into bits 60 .. 63.
    constexpr uint64_t kGather = (1ULL << 45) | (1ULL << 30) | (1ULL << 15) | 1ULL;
    return static_cast<uint32_t>(((y & 0x8000800080008000ULL) * kGather) >> 60);
  }
  // Positions 32w .. 32w + 31: bit j set when 32w + j is rejected (the
  // complement of Quad's, as the decode group reads them). With SSE2,
  // eight lanes at a time: x > t - 1 as a signed 16-bit comparison.
  uint32_t Rejects(int32_t w) const {
#if defined(__SSE2__)
    const __m128i low15 = _mm_set1_epi16(0x7fff);
    const __m128i limit = _mm_set1_epi16(static_cast<int16_t>((bias & 0xffff) - 0x8000));
    uint32_t bits = 0;
    for (int32_t i = 0; i < 2; ++i) {
      __m128i x[2];
      for (int32_t j = 0; j < 2; ++j) {
        const int32_t q = 8 * w + 4 * i + 2 * j;
        x[j] = _mm_and_si128(
            _mm_set_epi64x(static_cast<int64_t>(spec_detail::QuadHash(key, q + 1)),
                           static_cast<int64_t>(spec_detail::QuadHash(key, q))),
            low15);
        x[j] = _mm_cmpgt_epi16(x[j], limit);
      }
      bits |= static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(x[0], x[1])))
              << (16 * i);
    }
    return bits;
#else
    uint32_t bits = 0;
    for (int32_t i = 0; i < 8; ++i) bits |= Quad(8 * w + i) << (4 * i);
    return ~bits;
#endif
  }
  // Rejects from position `output` to the end of its word (bit 0: output);
  // the next word to read is (output >> 5) + 1.
  uint64_t RejectsFrom(int32_t output) const {
    return static_cast<uint64_t>(Rejects(output >> 5)) >> (output & 31);
  }
  // As SpecAcceptedDrafts: the run of accepted positions from `first`,
  // at most `drafts`. Two quads a round (at least five positions: one
  // round for k <= 4), without a branch on each draw.
  int32_t Accepted(int32_t first, int32_t drafts) const {
    int32_t a = 0;
    for (int32_t p = first;;) {
      const int32_t q = p >> 2, lane = p & 3;
      const uint32_t bits = (Quad(q) | Quad(q + 1) << 4) >> lane;
      const int32_t run = std::countr_one(bits);  // bits past the two are 0
      a += run;
      if (a >= drafts || run < 8 - lane) return std::min(a, drafts);
      p += run;
    }
  }
};

}  // namespace servesim
