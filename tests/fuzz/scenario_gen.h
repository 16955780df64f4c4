// Random valid scenarios for the simulation fuzzer: every traffic mode (open
// loop, max_concurrency, closed loop, multi-turn sessions, trace replay),
// every prefix model, clusters of 1-4 replicas with every router, every
// scheduler policy, chunked prefill on/off, tiny budgets, tight KV caches,
// prefix caching on/off, linear and roofline cost models, fp8 weights and
// KV cache, warm-up, disaggregated prefill/decode pools, KV offload to CPU
// with swap or recompute preemption. Each is
// small (at most ~2000 requests and ~100k output tokens) so that hundreds
// run per minute. The same choices always give the same JSON, which is what
// gets printed when a run fails: `servesim run` replays it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include <nlohmann/json.hpp>

namespace servesim::fuzz {

// Where the generator's decisions come from: a seeded stream, or the bytes
// of a libFuzzer input (so that coverage guides the choices).
class Choices {
 public:
  virtual ~Choices() = default;
  virtual uint64_t Bits() = 0;  // 64 bits

  uint64_t Below(uint64_t n) { return n <= 1 ? 0 : Bits() % n; }
  int64_t Int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }
  double Unit() { return static_cast<double>(Bits() >> 11) * 0x1p-53; }  // [0, 1)
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Unit(); }
  double LogUniform(double lo, double hi) { return lo * std::pow(hi / lo, Unit()); }
  // Log-uniform integer in [lo, hi], lo >= 0 (drawn on [lo + 1, hi + 2)).
  int64_t LogInt(int64_t lo, int64_t hi) {
    const double x = LogUniform(lo + 1.0, hi + 2.0) - 1;
    return std::clamp<int64_t>(static_cast<int64_t>(x), lo, hi);
  }
  bool Chance(double p) { return Unit() < p; }
  template <typename T>
  T Pick(std::initializer_list<T> options) {
    return options.begin()[Below(options.size())];
  }
};

// splitmix64 from a seed.
class SeededChoices : public Choices {
 public:
  explicit SeededChoices(uint64_t seed) : state_(seed) {}
  uint64_t Bits() override;

 private:
  uint64_t state_;
};

// Eight bytes of the input per decision, zeros once it is used up.
class ByteChoices : public Choices {
 public:
  ByteChoices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint64_t Bits() override;

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Bounds on the size of a scenario: requests, and output tokens summed over
// requests (roughly: from the length distributions' means).
struct GeneratorLimits {
  int64_t max_requests = 2000;
  double max_output_tokens = 1e5;
  // Steps x KV blocks (the per-step check walks the whole cache): about
  // 1.5 ns each in an optimised build.
  double max_block_steps = 3e8;
};

// Smaller, for the libFuzzer target: everything runs under ASan/UBSan and
// each input must finish well inside libFuzzer's -timeout.
inline GeneratorLimits LibFuzzerLimits() {
  GeneratorLimits l;
  l.max_requests = 100;
  l.max_output_tokens = 5e3;
  l.max_block_steps = 2e6;
  return l;
}

nlohmann::json GenerateScenario(Choices& c, const GeneratorLimits& limits = {});

}  // namespace servesim::fuzz
