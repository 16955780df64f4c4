// Seeded random streams. Each purpose (arrivals, input lengths, output
// lengths, prefixes, routing) gets its own stream derived from the scenario
// seed and the purpose name, so changing the engine or a policy never changes
// the traffic: what-if comparisons use common random numbers.
//
// The generator is xoshiro256** seeded through splitmix64; we implement the
// variates ourselves (not std::*_distribution, whose algorithms differ between
// standard libraries) so a seed means the same traffic everywhere.
#pragma once

#include <cstdint>
#include <string_view>

namespace servesim {

class Rng {
 public:
  Rng(uint64_t seed, std::string_view purpose);

  uint64_t NextU64();
  // Uniform in [0, 1) with 53 random bits.
  double Uniform();
  // Uniform in (0, 1]: safe to take the logarithm of.
  double UniformOpen() { return 1.0 - Uniform(); }
  double Exponential(double mean);
  double StandardNormal();
  // Gamma(shape, scale) by Marsaglia and Tsang (2000); shape < 1 is boosted
  // with the U^(1/shape) trick.
  double Gamma(double shape, double scale);
  // Uniform integer in [0, n).
  uint64_t Below(uint64_t n);

 private:
  uint64_t s_[4];
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

}  // namespace servesim
