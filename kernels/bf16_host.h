// Host-side bfloat16 helpers for the CPU references and the tests: bf16 is
// carried as its 16 raw bits (the top half of an IEEE float32), so these
// headers need no CUDA. Conversion rounds to nearest, ties to even.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace servesim::kernels {

using Bf16 = uint16_t;  // raw bits of a bfloat16

inline Bf16 FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<Bf16>(u >> 16);
}

inline float Bf16ToFloat(Bf16 b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float RoundToBf16(float f) { return Bf16ToFloat(FloatToBf16(f)); }

inline std::vector<Bf16> ToBf16(const std::vector<float>& v) {
  std::vector<Bf16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = FloatToBf16(v[i]);
  return out;
}

inline std::vector<float> FromBf16(const std::vector<Bf16>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = Bf16ToFloat(v[i]);
  return out;
}

// The poison pattern tests fill outputs with before a run: a bf16 NaN, so an
// element the kernel forgot to write fails any finite comparison.
constexpr Bf16 kBf16Poison = 0xffff;

}  // namespace servesim::kernels
