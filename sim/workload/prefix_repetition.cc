// vLLM bench's prefix_repetition dataset: num_prefixes random prefixes of
// prefix_len tokens; every prompt is one of them (drawn uniformly) followed
// by a unique suffix of suffix_len tokens, and asks for output_len tokens.
// Defaults are vllm bench serve's.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "sim/workload/length_distribution.h"
#include "sim/workload/prefix_families.h"

namespace servesim {
namespace {

class PrefixRepetition : public PrefixModel {
 public:
  PrefixRepetition(int64_t num_prefixes, int32_t prefix_len, int32_t suffix_len,
                   int32_t output_len)
      : num_prefixes_(num_prefixes),
        prefix_len_(prefix_len),
        suffix_len_(suffix_len),
        output_len_(output_len) {}

  void Apply(Rng& rng, RequestSpec* spec) const override {
    const uint64_t k = rng.Below(static_cast<uint64_t>(num_prefixes_));
    spec->content.prefix_id =
        SharedPrefixId(PrefixFamily::kPrefixRepetition, k);
    spec->content.prefix_len = prefix_len_;
    spec->prompt_len = prefix_len_ + suffix_len_;  // checked at construction
    spec->output_len = output_len_;
  }
  bool DefinesLengths() const override { return true; }
  void BoundLengths(int64_t* prompt, int64_t* output) const override {
    *prompt = int64_t{prefix_len_} + suffix_len_;
    *output = output_len_;
  }
  std::string Describe() const override {
    return "prefix_repetition(" + std::to_string(num_prefixes_) +
           " prefixes of " + std::to_string(prefix_len_) + " tokens + " +
           std::to_string(suffix_len_) + "-token suffix, output " +
           std::to_string(output_len_) + ")";
  }

 private:
  int64_t num_prefixes_;
  int32_t prefix_len_;
  int32_t suffix_len_;
  int32_t output_len_;
};

}  // namespace

std::unique_ptr<PrefixModel> MakePrefixRepetition(const JsonView& cfg) {
  cfg.AllowKeys(
      {"model", "num_prefixes", "prefix_len", "suffix_len", "output_len"});
  const Range count = Range::Closed(1, 1e9);
  const Range tokens = Range::Closed(1, kMaxPrefixTokens);
  const int64_t num_prefixes = cfg.Integer("num_prefixes", 10, count);
  const int64_t prefix_len = cfg.Integer("prefix_len", 256, tokens);
  // A suffix of 0 is allowed: every prompt is then exactly its prefix.
  const int64_t suffix_len =
      cfg.Integer("suffix_len", 256, Range::Closed(0, kMaxPrefixTokens));
  const int64_t output_len = cfg.Integer(
      "output_len", 128, Range::Closed(1, kMaxLengthTokens));
  return std::make_unique<PrefixRepetition>(
      num_prefixes, static_cast<int32_t>(prefix_len),
      static_cast<int32_t>(suffix_len), static_cast<int32_t>(output_len));
}

}  // namespace servesim
