// Internal to the prefix-model factory: the id scheme every model shares,
// length limits, and one maker per model. Code outside sim/workload calls
// MakePrefixModel(); the two classes below are public because they offer
// more than the interface (a suggested request count, a block size that the
// scenario loader overrides with the engine's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/core/json_view.h"
#include "sim/workload/prefix_model.h"

namespace servesim {

// Which model a shared prefix belongs to. It is part of every prefix id, so
// ids of different models never collide.
enum class PrefixFamily : uint64_t {
  kPrefixRepetition = 1,
  kRandomPrefix = 2,
  kGeneratedSharedPrefix = 3,
  kZipf = 4,
  kTargetHitRate = 5,
};

// The family takes the top 16 bits of the mixed input, the index the rest.
inline constexpr uint64_t kMaxPrefixIndex = (uint64_t{1} << 48) - 1;
// No prefix (or prefix-model suffix) is longer than this; far above any
// context window, and small enough that prefix + a drawn length never
// overflows int32 unless the length distribution itself allows ~2^31.
inline constexpr int64_t kMaxPrefixTokens = 100'000'000;

// The id of the index-th prefix of a family (index <= kMaxPrefixIndex).
uint64_t SharedPrefixId(PrefixFamily family, uint64_t index);

// prefix_len + drawn, aborting (a broken invariant, not a config error) if
// the sum does not fit a prompt length.
int32_t PromptWithPrefix(int64_t prefix_len, int32_t drawn);

// SGLang's generated-shared-prefix: num_groups system prompts, each shared
// by the requests of its group, followed by a unique question. SGLang makes
// num_groups * prompts_per_group prompts and shuffles them; for an
// open-ended request stream we draw the group uniformly per request, so
// prompts_per_group only informs SuggestedNumRequests().
class GeneratedSharedPrefix : public PrefixModel {
 public:
  GeneratedSharedPrefix(int64_t num_groups, int64_t prompts_per_group,
                        int32_t system_prompt_len, int32_t question_len,
                        int32_t output_len);
  void Apply(Rng& rng, RequestSpec* spec) const override;
  bool DefinesLengths() const override { return true; }
  void BoundLengths(int64_t* prompt, int64_t* output) const override {
    *prompt = int64_t{system_prompt_len_} + question_len_;
    *output = output_len_;
  }
  std::string Describe() const override;
  // SGLang's total prompt count: num_groups * prompts_per_group.
  int64_t SuggestedNumRequests() const;

 private:
  int64_t num_groups_;
  int64_t prompts_per_group_;
  int32_t system_prompt_len_;
  int32_t question_len_;
  int32_t output_len_;
};

// A target prefix-cache hit rate: each request shares a leading run of full
// KV blocks of one common document, sized so that shared tokens are
// hit_rate of prompt tokens. Lengths come from workload.input_len/output_len.
class TargetHitRatePrefix : public PrefixModel {
 public:
  static constexpr int32_t kDefaultBlockSize = 16;

  // hit_rate in [0, 1]; block_size >= 1 must equal the engine's block size,
  // since only full blocks can be shared.
  TargetHitRatePrefix(double hit_rate, int32_t block_size);
  void Apply(Rng& rng, RequestSpec* spec) const override;
  bool DefinesLengths() const override { return false; }
  // The shared blocks are part of the drawn prompt.
  void BoundLengths(int64_t*, int64_t*) const override {}
  std::string Describe() const override;
  int32_t block_size() const { return block_size_; }

 private:
  double hit_rate_;
  int32_t block_size_;
};

std::unique_ptr<PrefixModel> MakePrefixRepetition(const JsonView& cfg);
std::unique_ptr<PrefixModel> MakeRandomPrefix(const JsonView& cfg);
std::unique_ptr<PrefixModel> MakeGeneratedSharedPrefix(const JsonView& cfg);
std::unique_ptr<PrefixModel> MakeZipfPrefix(const JsonView& cfg);
std::unique_ptr<PrefixModel> MakeTargetHitRatePrefix(const JsonView& cfg);

}  // namespace servesim
