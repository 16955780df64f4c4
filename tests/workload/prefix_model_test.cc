// Tests for the prefix models against independent truth: Zipf frequencies
// against 1/k^s, uniform prefix choice, exact lengths, the full-block hit
// rate a target_hit_rate model really delivers, prefix ids, and config errors.
#include "sim/workload/prefix_model.h"

#include <gtest/gtest.h>

#include "tests/text_assertions.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"
#include "sim/workload/length_distribution.h"
#include "sim/workload/prefix_families.h"

namespace servesim {
namespace {

std::unique_ptr<PrefixModel> Make(const std::string& json) {
  const nlohmann::json j = nlohmann::json::parse(json);
  return MakePrefixModel(JsonView(j, "s.json", "/workload/prefix"));
}

std::string ErrorOf(const std::string& json) {
  try {
    Make(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

using testing::Contains;

// A request as the driver hands it over: lengths drawn, stream id set.
RequestSpec Drawn(int32_t prompt_len, int32_t output_len = 7) {
  RequestSpec spec;
  spec.prompt_len = prompt_len;
  spec.output_len = output_len;
  spec.content.stream_id = 12345;
  return spec;
}

// |observed - expected| within `sigmas` binomial standard deviations.
void ExpectBinomial(int64_t observed, int64_t n, double p, double sigmas = 5) {
  const double sd = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(observed), n * p, sigmas * sd + 1e-9)
      << "p=" << p << " n=" << n;
}

TEST(PrefixModelTest, PrefixRepetitionHasExactLengthsAndUniformPrefixes) {
  auto m = Make(R"({"model": "prefix_repetition", "num_prefixes": 8,
                    "prefix_len": 300, "suffix_len": 50, "output_len": 40})");
  EXPECT_TRUE(m->DefinesLengths());
  EXPECT_EQ(m->Describe(),
            "prefix_repetition(8 prefixes of 300 tokens + 50-token suffix, "
            "output 40)");
  Rng rng(3, "prefix");
  std::map<uint64_t, int64_t> counts;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    RequestSpec spec = Drawn(0, 0);
    m->Apply(rng, &spec);
    ASSERT_EQ(spec.prompt_len, 350);
    ASSERT_EQ(spec.output_len, 40);
    ASSERT_EQ(spec.content.prefix_len, 300);
    ASSERT_NE(spec.content.prefix_id, 0u);
    ASSERT_EQ(spec.content.stream_id, 12345u);  // the driver's, untouched
    ++counts[spec.content.prefix_id];
  }
  ASSERT_EQ(counts.size(), 8u);  // distinct prefixes have distinct ids
  for (const auto& [id, c] : counts) ExpectBinomial(c, n, 1.0 / 8);
}

TEST(PrefixModelTest, PrefixRepetitionDefaultsAreVllmBenchs) {
  auto m = Make(R"({"model": "prefix_repetition"})");
  Rng rng(1, "prefix");
  RequestSpec spec = Drawn(0, 0);
  m->Apply(rng, &spec);
  EXPECT_EQ(spec.prompt_len, 512);
  EXPECT_EQ(spec.content.prefix_len, 256);
  EXPECT_EQ(spec.output_len, 128);
  EXPECT_TRUE(Contains(m->Describe(), {"10 prefixes"}));
}

TEST(PrefixModelTest, RandomPrefixPrependsOneCommonPrefix) {
  auto m = Make(R"({"model": "random_prefix", "prefix_len": 64})");
  EXPECT_FALSE(m->DefinesLengths());
  Rng rng(5, "prefix");
  std::set<uint64_t> ids;
  for (int32_t len : {1, 17, 500}) {
    RequestSpec spec = Drawn(len);
    m->Apply(rng, &spec);
    EXPECT_EQ(spec.prompt_len, 64 + len);
    EXPECT_EQ(spec.output_len, 7);
    EXPECT_EQ(spec.content.prefix_len, 64);
    ids.insert(spec.content.prefix_id);
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_NE(*ids.begin(), 0u);

  auto none = Make(R"({"model": "random_prefix", "prefix_len": 0})");
  RequestSpec spec = Drawn(90);
  none->Apply(rng, &spec);
  EXPECT_EQ(spec.prompt_len, 90);
  EXPECT_EQ(spec.content.prefix_id, 0u);
  EXPECT_EQ(spec.content.prefix_len, 0);
}

TEST(PrefixModelTest, GeneratedSharedPrefixLengthsAndGroups) {
  auto m = Make(R"({"model": "generated_shared_prefix", "num_groups": 5,
                    "prompts_per_group": 3, "system_prompt_len": 1000,
                    "question_len": 24, "output_len": 99})");
  EXPECT_TRUE(m->DefinesLengths());
  const auto* gsp = dynamic_cast<const GeneratedSharedPrefix*>(m.get());
  ASSERT_NE(gsp, nullptr);
  EXPECT_EQ(gsp->SuggestedNumRequests(), 15);
  Rng rng(9, "prefix");
  std::map<uint64_t, int64_t> counts;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    RequestSpec spec = Drawn(0, 0);
    m->Apply(rng, &spec);
    ASSERT_EQ(spec.prompt_len, 1024);
    ASSERT_EQ(spec.output_len, 99);
    ASSERT_EQ(spec.content.prefix_len, 1000);
    ++counts[spec.content.prefix_id];
  }
  ASSERT_EQ(counts.size(), 5u);
  for (const auto& [id, c] : counts) ExpectBinomial(c, n, 1.0 / 5);

  auto defaults = Make(R"({"model": "generated_shared_prefix"})");
  RequestSpec spec = Drawn(0, 0);
  defaults->Apply(rng, &spec);
  EXPECT_EQ(spec.prompt_len, 2048 + 128);
  EXPECT_EQ(spec.output_len, 256);
  EXPECT_TRUE(Contains(defaults->Describe(), {"64 groups", "1024 requests"}));
}

TEST(PrefixModelTest, ZipfFrequenciesFollowPowerLaw) {
  // Distinct lengths name the rank, so the test needs no access to ids.
  const int k = 100;
  const double s = 1.1;
  nlohmann::json cfg = {{"model", "zipf"}, {"num_prefixes", k}, {"s", s}};
  std::vector<int> lens;
  for (int i = 0; i < k; ++i) lens.push_back(1000 + i);
  cfg["prefix_len"] = lens;
  auto m = MakePrefixModel(JsonView(cfg, "s.json", "/workload/prefix"));
  EXPECT_FALSE(m->DefinesLengths());
  EXPECT_EQ(m->Describe(),
            "zipf(100 prefixes of 1000..1099 tokens, s=1.1) + suffix from "
            "input_len");

  double norm = 0;
  for (int i = 1; i <= k; ++i) norm += std::pow(i, -s);
  Rng rng(21, "prefix");
  std::vector<int64_t> counts(k, 0);
  std::map<int32_t, uint64_t> id_of_len;
  const int n = 500000;
  for (int i = 0; i < n; ++i) {
    RequestSpec spec = Drawn(10);
    m->Apply(rng, &spec);
    const int rank = spec.content.prefix_len - 1000;
    ASSERT_GE(rank, 0);
    ASSERT_LT(rank, k);
    ASSERT_EQ(spec.prompt_len, spec.content.prefix_len + 10);
    ++counts[rank];
    // The same prefix always has the same id.
    auto [it, fresh] =
        id_of_len.emplace(spec.content.prefix_len, spec.content.prefix_id);
    ASSERT_EQ(it->second, spec.content.prefix_id);
  }
  std::set<uint64_t> ids;
  for (const auto& [len, id] : id_of_len) ids.insert(id);
  EXPECT_EQ(ids.size(), id_of_len.size());
  EXPECT_EQ(ids.count(0), 0u);

  double chi2 = 0;
  for (int i = 0; i < k; ++i) {
    const double p = std::pow(i + 1, -s) / norm;
    chi2 += std::pow(counts[i] - n * p, 2) / (n * p);
    if (i < 10) ExpectBinomial(counts[i], n, p);
  }
  // 99 degrees of freedom: mean 99, sd 14; 170 is five sd out.
  EXPECT_LT(chi2, 170.0);
}

TEST(PrefixModelTest, ZipfEdgeCases) {
  // One prefix; a steep exponent whose tail weights underflow to zero.
  auto one = Make(R"({"model": "zipf", "num_prefixes": 1, "prefix_len": 8,
                      "s": 2})");
  auto steep = Make(R"({"model": "zipf", "num_prefixes": 1000,
                        "prefix_len": 8, "s": 400})");
  Rng rng(4, "prefix");
  uint64_t first = 0;
  for (int i = 0; i < 10000; ++i) {
    RequestSpec a = Drawn(3), b = Drawn(3);
    one->Apply(rng, &a);
    steep->Apply(rng, &b);
    ASSERT_EQ(a.prompt_len, 11);
    ASSERT_EQ(a.content.prefix_id, b.content.prefix_id);  // both rank 1
    if (i == 0) first = a.content.prefix_id;
    ASSERT_EQ(a.content.prefix_id, first);
  }
  EXPECT_TRUE(Contains(one->Describe(), {"1 prefixes of 8 tokens, s=2"}));
}

// Token-weighted share of prompt tokens that sit in shared full blocks.
double DeliveredHitRate(const PrefixModel& m, int block_size, int n,
                        uint64_t seed = 17) {
  const nlohmann::json lj = {
      {"dist", "lognormal"}, {"median", 120}, {"p99", 2048}};
  auto lengths = MakeLengthDistribution(JsonView(lj, "s.json", "/in"));
  Rng len_rng(seed, "input_len");
  Rng rng(seed, "prefix");
  const uint64_t doc = SharedPrefixId(PrefixFamily::kTargetHitRate, 0);
  double shared = 0, total = 0;
  for (int i = 0; i < n; ++i) {
    RequestSpec spec = Drawn(lengths->Sample(len_rng));
    const int32_t len = spec.prompt_len;
    m.Apply(rng, &spec);
    EXPECT_EQ(spec.prompt_len, len);  // lengths are the driver's
    const PromptContent& c = spec.content;
    if (c.prefix_len == 0) {
      EXPECT_EQ(c.prefix_id, 0u);
    } else {
      EXPECT_EQ(c.prefix_id, doc);
    }
    EXPECT_EQ(c.prefix_len % block_size, 0);
    EXPECT_LT(c.prefix_len, len) << "the last prompt token is never shared";
    if (::testing::Test::HasFailure()) return -1;
    shared += (c.prefix_len / block_size) * block_size;
    total += len;
  }
  return shared / total;
}

TEST(PrefixModelTest, TargetHitRateDeliversTargetInFullBlocks) {
  for (double f : {0.0, 0.4, 0.9}) {
    nlohmann::json cfg = {{"model", "target_hit_rate"}, {"hit_rate", f}};
    auto m = MakePrefixModel(JsonView(cfg, "s.json", "/workload/prefix"));
    EXPECT_FALSE(m->DefinesLengths());
    // Within 1 pt: short prompts cannot share their last block, so 0.9
    // delivers ~0.892 at these lengths (0.5 pt would hold with a carry
    // between requests, which a stateless model shared by runs cannot keep).
    EXPECT_NEAR(DeliveredHitRate(*m, 16, 300000), f, 0.01) << "f=" << f;
  }
}

TEST(PrefixModelTest, TargetHitRateRoundsAtRandomAroundTheExactTarget) {
  // 0.37 * 1000 = 370 tokens = 23.125 blocks: 23 or 24 blocks, mean 23.125.
  TargetHitRatePrefix m(0.37, 16);
  Rng rng(6, "prefix");
  const int n = 200000;
  int64_t big = 0;
  for (int i = 0; i < n; ++i) {
    RequestSpec spec = Drawn(1000);
    m.Apply(rng, &spec);
    ASSERT_TRUE(spec.content.prefix_len == 368 ||
                spec.content.prefix_len == 384)
        << spec.content.prefix_len;
    big += spec.content.prefix_len == 384;
  }
  ExpectBinomial(big, n, 0.125);
}

TEST(PrefixModelTest, TargetHitRateHonoursEngineBlockSize) {
  auto m = Make(R"({"model": "target_hit_rate", "hit_rate": 0.6,
                    "block_size": 32})");
  EXPECT_EQ(m->Describe(),
            "target_hit_rate(60% of prompt tokens in shared 32-token blocks) "
            "+ lengths from input_len");
  EXPECT_NEAR(DeliveredHitRate(*m, 32, 200000), 0.6, 0.01);  // cap binds more
  // The loader overrides the block size by constructing the model directly.
  TargetHitRatePrefix direct(0.6, 64);
  EXPECT_EQ(direct.block_size(), 64);
  // 64-token blocks on median-120 prompts: the last-token cap binds often.
  EXPECT_NEAR(DeliveredHitRate(direct, 64, 200000), 0.6, 0.03);
}

TEST(PrefixModelTest, TargetHitRateIsDeterministic) {
  TargetHitRatePrefix a(0.5, 16), b(0.5, 16);
  Rng ra(8, "prefix"), rb(8, "prefix");
  for (int len = 1; len < 3000; len += 7) {
    RequestSpec x = Drawn(len), y = Drawn(len);
    a.Apply(ra, &x);
    b.Apply(rb, &y);
    ASSERT_EQ(x.content.prefix_len, y.content.prefix_len);
  }
}

TEST(PrefixModelTest, PrefixIdsAreDistinctAndNonzeroAcrossModels) {
  std::set<uint64_t> ids;
  int64_t made = 0;
  for (auto family :
       {PrefixFamily::kPrefixRepetition, PrefixFamily::kRandomPrefix,
        PrefixFamily::kGeneratedSharedPrefix, PrefixFamily::kZipf,
        PrefixFamily::kTargetHitRate}) {
    for (uint64_t i : {uint64_t{0}, uint64_t{1}, uint64_t{2}, uint64_t{999},
                       kMaxPrefixIndex}) {
      const uint64_t id = SharedPrefixId(family, i);
      EXPECT_NE(id, 0u);
      EXPECT_EQ(id, SharedPrefixId(family, i));
      ids.insert(id);
      ++made;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(ids.size()), made);
  // Models' first prefixes differ too (not just the helper).
  Rng rng(1, "prefix");
  std::set<uint64_t> first;
  for (const char* cfg :
       {R"({"model": "prefix_repetition", "num_prefixes": 1})",
        R"({"model": "random_prefix", "prefix_len": 32})",
        R"({"model": "generated_shared_prefix", "num_groups": 1})",
        R"({"model": "zipf", "num_prefixes": 1, "prefix_len": 32, "s": 1})",
        R"({"model": "target_hit_rate", "hit_rate": 1})"}) {
    RequestSpec spec = Drawn(4000);
    Make(cfg)->Apply(rng, &spec);
    EXPECT_NE(spec.content.prefix_id, 0u) << cfg;
    first.insert(spec.content.prefix_id);
  }
  EXPECT_EQ(first.size(), 5u);
}

TEST(PrefixModelTest, ConfigErrorsNameThePathAndSuggest) {
  EXPECT_TRUE(Contains(ErrorOf(R"({"model": "zpif"})"),
                       {"s.json: /workload/prefix/model",
                        "did you mean \"zipf\"", "got \"zpif\""}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"num_prefixes": 3})"),
                       {"/workload/prefix/model", "one of prefix_repetition"}));
  EXPECT_TRUE(Contains(ErrorOf(R"("zipf")"),
                       {"/workload/prefix", "expected a prefix model object"}));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"model": "prefix_repetition", "prefix_lenn": 3})"),
               {"/workload/prefix/prefix_lenn", "unknown key",
                "did you mean \"prefix_len\""}));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"model": "zipf", "num_prefixes": 3, "prefix_len": 8,
                  "s": 0})"),
               {"/workload/prefix/s", "expected a number > 0", "got 0"}));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"model": "zipf", "num_prefixes": 3, "prefix_len": 8,
                  "s": -1})"),
               {"/workload/prefix/s", "got -1"}));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"model": "target_hit_rate", "hit_rate": 1.5})"),
               {"/workload/prefix/hit_rate", "in [0, 1]", "got 1.5"}));
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"model": "zipf", "num_prefixes": 3, "prefix_len": [8, 9],
                  "s": 1})"),
      {"/workload/prefix/prefix_len", "num_prefixes (3)", "got 2"}));
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"model": "zipf", "num_prefixes": 2, "prefix_len": [8, 9.5],
                  "s": 1})"),
      {"/workload/prefix/prefix_len/1", "expected an integer", "got 9.5"}));
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"model": "zipf", "num_prefixes": 2, "prefix_len": [8, 0],
                  "s": 1})"),
      {"/workload/prefix/prefix_len/1", "got 0"}));
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"model": "zipf", "num_prefixes": 2, "prefix_len": "8",
                  "s": 1})"),
      {"/workload/prefix/prefix_len", "or an array", "got \"8\""}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"model": "zipf", "prefix_len": 8, "s": 1})"),
                       {"/workload/prefix/num_prefixes", "got nothing"}));
  EXPECT_TRUE(
      Contains(ErrorOf(R"({"model": "prefix_repetition", "num_prefixes": 0})"),
               {"/workload/prefix/num_prefixes", "got 0"}));
  EXPECT_TRUE(Contains(
      ErrorOf(R"({"model": "generated_shared_prefix", "question_len": 0})"),
      {"/workload/prefix/question_len", "got 0"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"model": "random_prefix"})"),
                       {"/workload/prefix/prefix_len", "got nothing"}));
  EXPECT_TRUE(Contains(ErrorOf(R"({"model": "target_hit_rate", "hit_rate": 0.5,
                  "block_size": 0})"),
                       {"/workload/prefix/block_size", "got 0"}));
}

}  // namespace
}  // namespace servesim
