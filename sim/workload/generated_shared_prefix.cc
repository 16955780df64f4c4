// SGLang bench's generated-shared-prefix dataset (see prefix_families.h for
// how its shuffled, finite prompt set becomes a per-request draw). Defaults
// are sglang.bench_serving's.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "sim/workload/length_distribution.h"
#include "sim/workload/prefix_families.h"

namespace servesim {

GeneratedSharedPrefix::GeneratedSharedPrefix(int64_t num_groups,
                                             int64_t prompts_per_group,
                                             int32_t system_prompt_len,
                                             int32_t question_len,
                                             int32_t output_len)
    : num_groups_(num_groups),
      prompts_per_group_(prompts_per_group),
      system_prompt_len_(system_prompt_len),
      question_len_(question_len),
      output_len_(output_len) {}

void GeneratedSharedPrefix::Apply(Rng& rng, RequestSpec* spec) const {
  const uint64_t group = rng.Below(static_cast<uint64_t>(num_groups_));
  spec->content.prefix_id =
      SharedPrefixId(PrefixFamily::kGeneratedSharedPrefix, group);
  spec->content.prefix_len = system_prompt_len_;
  spec->prompt_len = system_prompt_len_ + question_len_;  // fits: see maker
  spec->output_len = output_len_;
}

std::string GeneratedSharedPrefix::Describe() const {
  return "generated_shared_prefix(" + std::to_string(num_groups_) +
         " groups with " + std::to_string(system_prompt_len_) +
         "-token system prompts + " + std::to_string(question_len_) +
         "-token questions, output " + std::to_string(output_len_) +
         "; SGLang sends " + std::to_string(SuggestedNumRequests()) +
         " requests)";
}

int64_t GeneratedSharedPrefix::SuggestedNumRequests() const {
  return num_groups_ * prompts_per_group_;  // both bounded at construction
}

std::unique_ptr<PrefixModel> MakeGeneratedSharedPrefix(const JsonView& cfg) {
  cfg.AllowKeys({"model", "num_groups", "prompts_per_group",
                 "system_prompt_len", "question_len", "output_len"});
  // 2^24 each keeps num_groups * prompts_per_group far inside int64.
  const Range count = Range::Closed(1, 1 << 24);
  const Range tokens = Range::Closed(1, kMaxPrefixTokens);
  const int64_t num_groups = cfg.Integer("num_groups", 64, count);
  const int64_t prompts_per_group = cfg.Integer("prompts_per_group", 16, count);
  const int64_t system_prompt_len =
      cfg.Integer("system_prompt_len", 2048, tokens);
  const int64_t question_len = cfg.Integer("question_len", 128, tokens);
  const int64_t output_len = cfg.Integer(
      "output_len", 256, Range::Closed(1, kMaxLengthTokens));
  return std::make_unique<GeneratedSharedPrefix>(
      num_groups, prompts_per_group, static_cast<int32_t>(system_prompt_len),
      static_cast<int32_t>(question_len), static_cast<int32_t>(output_len));
}

}  // namespace servesim
