// The prefix-model factory and the prefix-id scheme the models share.
#include "sim/workload/prefix_model.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "sim/core/status.h"
#include "sim/workload/prefix_families.h"

namespace servesim {

uint64_t SharedPrefixId(PrefixFamily family, uint64_t index) {
  if (index > kMaxPrefixIndex) {
    std::fprintf(stderr, "SharedPrefixId: index %llu exceeds 2^48 - 1\n",
                 static_cast<unsigned long long>(index));
    std::abort();
  }
  // The splitmix64 finaliser is a bijection of uint64 that maps only 0 to 0.
  // Its input is nonzero (family >= 1) and unique per (family, index), so
  // ids are distinct and nonzero by construction. Mixing, rather than using
  // the input as is, keeps prefix ids far from the small sequential stream
  // ids the driver hands out, which name tokens in the same hash space.
  uint64_t z = (static_cast<uint64_t>(family) << 48) | index;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int32_t PromptWithPrefix(int64_t prefix_len, int32_t drawn) {
  const int64_t total = prefix_len + drawn;
  if (prefix_len < 0 || drawn < 0 ||
      total > std::numeric_limits<int32_t>::max()) {
    std::fprintf(stderr,
                 "prefix model: prefix of %lld tokens + drawn length %d does "
                 "not fit a prompt length\n",
                 static_cast<long long>(prefix_len), drawn);
    std::abort();
  }
  return static_cast<int32_t>(total);
}

std::unique_ptr<PrefixModel> MakePrefixModel(const JsonView& cfg) {
  if (!cfg.raw().is_object()) {
    throw ConfigError(
        cfg.file() + ": " + (cfg.path().empty() ? "/" : cfg.path()) +
        ": expected a prefix model object, got " + DescribeJson(cfg.raw()));
  }
  // Each model checks its own keys, so the model is chosen first.
  const std::string model =
      cfg.Choice("model", "",
                 {"prefix_repetition", "random_prefix",
                  "generated_shared_prefix", "zipf", "target_hit_rate"});
  if (model == "prefix_repetition") return MakePrefixRepetition(cfg);
  if (model == "random_prefix") return MakeRandomPrefix(cfg);
  if (model == "generated_shared_prefix") return MakeGeneratedSharedPrefix(cfg);
  if (model == "zipf") return MakeZipfPrefix(cfg);
  return MakeTargetHitRatePrefix(cfg);
}

}  // namespace servesim
