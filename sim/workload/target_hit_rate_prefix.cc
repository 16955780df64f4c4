// A requested prefix-cache hit rate. The engine shares only full KV blocks,
// and never the last prompt token (vLLM always recomputes at least one), so
// a request of L tokens shares b full blocks of one common document, b at
// most floor((L - 1) / block_size). b is the target f * L / block_size
// rounded at random (floor, plus one with probability of the fraction), so
// the expected shared tokens are exactly f * L whenever the cap allows.
// Short prompts the cap binds on fall a little short (0.892 delivered for
// 0.9 at median 120 tokens); the model stays stateless so one instance can
// serve parallel runs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "sim/workload/prefix_families.h"

namespace servesim {
namespace {

// Every request shares leading blocks of the same document.
constexpr uint64_t kDocumentIndex = 0;

}  // namespace

TargetHitRatePrefix::TargetHitRatePrefix(double hit_rate, int32_t block_size)
    : hit_rate_(hit_rate), block_size_(block_size) {}

void TargetHitRatePrefix::Apply(Rng& rng, RequestSpec* spec) const {
  const int32_t len = spec->prompt_len;
  const double cap = len >= 1 ? (len - 1) / block_size_ : 0;
  const double target = std::min(hit_rate_ * len / block_size_, cap);
  const double whole = std::floor(target);
  // Always draw, so the stream's position does not depend on the lengths.
  const bool extra = rng.Uniform() < target - whole;
  const int64_t blocks = static_cast<int64_t>(whole) + (extra ? 1 : 0);
  if (blocks == 0) {
    spec->content.prefix_id = 0;
    spec->content.prefix_len = 0;
    return;
  }
  spec->content.prefix_id =
      SharedPrefixId(PrefixFamily::kTargetHitRate, kDocumentIndex);
  spec->content.prefix_len = static_cast<int32_t>(blocks * block_size_);
}

std::string TargetHitRatePrefix::Describe() const {
  char buf[128];
  std::snprintf(buf, sizeof(buf),
                "target_hit_rate(%.4g%% of prompt tokens in shared "
                "%d-token blocks) + lengths from input_len",
                hit_rate_ * 100.0, block_size_);
  return buf;
}

std::unique_ptr<PrefixModel> MakeTargetHitRatePrefix(const JsonView& cfg) {
  cfg.AllowKeys({"model", "hit_rate", "block_size"});
  const double hit_rate = cfg.RequireNumber("hit_rate", Range::Closed(0, 1));
  const int64_t block_size =
      cfg.Integer("block_size", TargetHitRatePrefix::kDefaultBlockSize,
                  Range::Closed(1, 1 << 20));
  return std::make_unique<TargetHitRatePrefix>(
      hit_rate, static_cast<int32_t>(block_size));
}

}  // namespace servesim
