// Zipf-popular prefixes: K prefixes, the k-th (k = 1..K) chosen with
// probability proportional to 1/k^s, followed by a unique suffix whose length
// comes from workload.input_len. The index is drawn exactly by inverting the
// CDF, precomputed once: O(log K) per request.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"
#include "sim/workload/prefix_families.h"

namespace servesim {
namespace {

std::string FormatExponent(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", s);
  return buf;
}

class ZipfPrefix : public PrefixModel {
 public:
  // Invariant: prefix_lens.size() == K >= 1; cdf_ is nondecreasing with
  // cdf_.back() == 1 exactly, so every u in [0, 1) finds an index < K.
  ZipfPrefix(std::vector<int32_t> prefix_lens, double s)
      : prefix_lens_(std::move(prefix_lens)), s_(s) {
    const size_t k = prefix_lens_.size();
    cdf_.resize(k);
    double total = 0.0;
    for (size_t i = 0; i < k; ++i) {
      total += std::pow(static_cast<double>(i + 1), -s_);
      cdf_[i] = total;
    }
    for (double& c : cdf_) c /= total;
    cdf_.back() = 1.0;
  }

  void Apply(Rng& rng, RequestSpec* spec) const override {
    // The first k with cdf_[k] > u; ranks of underflowed (zero) weight have
    // cdf_ equal to their predecessor's and are never chosen.
    const double u = rng.Uniform();
    const size_t k = static_cast<size_t>(
        std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
    spec->content.prefix_id = SharedPrefixId(PrefixFamily::kZipf, k);
    spec->content.prefix_len = prefix_lens_[k];
    spec->prompt_len = PromptWithPrefix(prefix_lens_[k], spec->prompt_len);
  }
  bool DefinesLengths() const override { return false; }
  void BoundLengths(int64_t* prompt, int64_t*) const override {
    *prompt += *std::max_element(prefix_lens_.begin(), prefix_lens_.end());
  }
  std::string Describe() const override {
    const auto [lo, hi] =
        std::minmax_element(prefix_lens_.begin(), prefix_lens_.end());
    const std::string lens =
        *lo == *hi ? std::to_string(*lo)
                   : std::to_string(*lo) + ".." + std::to_string(*hi);
    return "zipf(" + std::to_string(prefix_lens_.size()) + " prefixes of " +
           lens + " tokens, s=" + FormatExponent(s_) +
           ") + suffix from input_len";
  }

 private:
  std::vector<int32_t> prefix_lens_;
  double s_;
  std::vector<double> cdf_;
};

// "prefix_len": one length for every prefix, or an array of exactly K.
std::vector<int32_t> ReadPrefixLengths(const JsonView& cfg, int64_t k) {
  const Range tokens = Range::Closed(1, kMaxPrefixTokens);
  if (!cfg.Has("prefix_len") || !cfg.raw()["prefix_len"].is_array()) {
    if (cfg.Has("prefix_len") && !cfg.raw()["prefix_len"].is_number()) {
      cfg.Fail("prefix_len", "an integer " + tokens.Describe() +
                                 " or an array of num_prefixes of them");
    }
    const int64_t len = cfg.RequireInteger("prefix_len", tokens);
    return std::vector<int32_t>(static_cast<size_t>(k),
                                static_cast<int32_t>(len));
  }
  const std::vector<double> raw = cfg.Numbers("prefix_len", {}, tokens);
  if (static_cast<int64_t>(raw.size()) != k) {
    cfg.FailMessage("prefix_len", "expected an array of num_prefixes (" +
                                      std::to_string(k) + ") lengths, got " +
                                      std::to_string(raw.size()));
  }
  std::vector<int32_t> lens;
  lens.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != std::floor(raw[i])) {
      throw ConfigError(cfg.file() + ": " + cfg.PathOf("prefix_len") + "/" +
                        std::to_string(i) + ": expected an integer " +
                        tokens.Describe() + ", got " +
                        DescribeJson(cfg.raw()["prefix_len"][i]));
    }
    lens.push_back(static_cast<int32_t>(raw[i]));
  }
  return lens;
}

}  // namespace

std::unique_ptr<PrefixModel> MakeZipfPrefix(const JsonView& cfg) {
  cfg.AllowKeys({"model", "num_prefixes", "prefix_len", "s"});
  // The CDF costs 8 bytes a prefix; 10^7 prefixes is 80 MB.
  const int64_t k = cfg.RequireInteger("num_prefixes", Range::Closed(1, 1e7));
  std::vector<int32_t> lens = ReadPrefixLengths(cfg, k);
  const double s = cfg.RequireNumber("s", Range::Positive());
  return std::make_unique<ZipfPrefix>(std::move(lens), s);
}

}  // namespace servesim
