// vLLM's random dataset with --random-prefix-len: one common prefix of
// prefix_len tokens before every prompt; the rest of the prompt is drawn
// from workload.input_len, so prompt_len = prefix_len + drawn length.
#include <cstdint>
#include <memory>
#include <string>

#include "sim/workload/prefix_families.h"

namespace servesim {
namespace {

class RandomPrefix : public PrefixModel {
 public:
  explicit RandomPrefix(int32_t prefix_len) : prefix_len_(prefix_len) {}

  void Apply(Rng&, RequestSpec* spec) const override {
    spec->prompt_len = PromptWithPrefix(prefix_len_, spec->prompt_len);
    // prefix_len 0 (vLLM's default) means no shared prefix at all.
    spec->content.prefix_id =
        prefix_len_ > 0 ? SharedPrefixId(PrefixFamily::kRandomPrefix, 0) : 0;
    spec->content.prefix_len = prefix_len_;
  }
  bool DefinesLengths() const override { return false; }
  void BoundLengths(int64_t* prompt, int64_t*) const override {
    *prompt += prefix_len_;
  }
  std::string Describe() const override {
    return "random_prefix(" + std::to_string(prefix_len_) +
           "-token common prefix) + rest from input_len";
  }

 private:
  int32_t prefix_len_;
};

}  // namespace

std::unique_ptr<PrefixModel> MakeRandomPrefix(const JsonView& cfg) {
  cfg.AllowKeys({"model", "prefix_len"});
  const int64_t prefix_len =
      cfg.RequireInteger("prefix_len", Range::Closed(0, kMaxPrefixTokens));
  return std::make_unique<RandomPrefix>(static_cast<int32_t>(prefix_len));
}

}  // namespace servesim
