// Speculative decoding worked out by hand (exact steps and timestamps under
// the linear cost model), its acceptance statistics against the closed
// form, per-request rates from a Beta distribution, the KV rollback, and
// the scenario's validation.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/engine/spec_decode.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

using testing::LinearScenario;
using testing::MustParse;
using testing::RunScenario;

constexpr SimTime kUs = 1'000;

// One request, prompt 10, 7 output tokens; step 1 ms + 0.1 ms per prompt
// (or verify) token + 0.5 ms per one-token decode; blocks of 4 tokens.
std::string OneRequest(const std::string& spec) {
  return LinearScenario(
      R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
      R"("arrival": {"process": "constant", "rate": 1000},
         "input_len": {"dist": "fixed", "value": 10},
         "output_len": {"dist": "fixed", "value": 7}, "num_requests": 1)",
      R"("block_size": 4, "speculative_decoding": )" + spec);
}

// Every draft accepted (k = 3):
//  step 1 [0, 2]      prefill 10                  -> token 1
//  step 2 [2, 3.4]    verify 1 + 3 (a 4-token query, 1 + 0.4 ms)
//                                                  -> tokens 2..5 (3 drafts + bonus)
//  step 3 [3.4, 4.6]  verify 1 + 1 (only 2 tokens left)
//                                                  -> tokens 6, 7 (done)
TEST(SpecDecode, GoldenAllAccepted) {
  const Scenario sc = MustParse(OneRequest(
      R"({"num_speculative_tokens": 3, "acceptance_rate": 1.0})"));
  EXPECT_FALSE(sc.engine.async_scheduling);  // turned off with it
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_EQ(out.steps.size(), 3u);
  const SimTime ends[] = {2000 * kUs, 3400 * kUs, 4600 * kUs};
  const int64_t tokens[] = {10, 4, 2};
  const int32_t blocks[] = {3, 4, 4};  // 10 -> 14 -> 16 tokens of KV
  for (size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE("step " + std::to_string(k));
    EXPECT_EQ(out.steps[k].end, ends[k]);
    EXPECT_EQ(out.steps[k].num_tokens, tokens[k]);
    EXPECT_EQ(out.steps[k].kv_blocks_used, blocks[k]);
  }
  const Request& r = out.requests[0];
  EXPECT_EQ(r.first_token, 2000 * kUs);
  EXPECT_EQ(r.finish, 4600 * kUs);
  EXPECT_EQ(r.num_output, 7);
  EXPECT_EQ(r.deliveries, 3);
  EXPECT_EQ(r.max_delivered, 4);
  // TPOT (vLLM): (e2e - ttft) / (tokens - 1) = 2.6 / 6 ms; ITL: one gap
  // per delivery (1.4 and 1.2 ms), as vLLM's engine and bench record it.
  EXPECT_NEAR(s.tpot_ms.mean, 2.6 / 6, 1e-9);
  EXPECT_EQ(s.itl_ms.count, 2);
  EXPECT_NEAR(s.itl_ms.mean, 1.3, 0.01);
  EXPECT_EQ(s.spec_drafts, 2);
  EXPECT_EQ(s.spec_draft_tokens, 4);
  EXPECT_EQ(s.spec_accepted_tokens, 4);
  EXPECT_DOUBLE_EQ(s.spec_acceptance_rate, 1.0);
  EXPECT_DOUBLE_EQ(s.spec_mean_acceptance_length, 3.0);
}

// Every draft rejected: each verify delivers the target's own token only,
// and the rejected drafts' KV is rolled back (blocks beyond it freed).
//  step 1 [0, 2]       prefill 10          -> token 1
//  step 2 [2, 3.4]     verify 1 + 3        -> token 2 (KV 14 -> 11 tokens)
//  step 3 [3.4, 4.8]   verify 1 + 3        -> token 3
//  step 4 [4.8, 6.2]   verify 1 + 3        -> token 4
//  step 5 [6.2, 7.5]   verify 1 + 2        -> token 5
//  step 6 [7.5, 8.7]   verify 1 + 1        -> token 6
//  step 7 [8.7, 10.2]  decode (1.5 ms)     -> token 7 (done)
TEST(SpecDecode, GoldenAllRejected) {
  const Scenario sc = MustParse(OneRequest(
      R"({"num_speculative_tokens": 3, "acceptance_rate": 0.0})"));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_EQ(out.steps.size(), 7u);
  const SimTime ends[] = {2000, 3400, 4800, 6200, 7500, 8700, 10200};
  const int64_t tokens[] = {10, 4, 4, 4, 3, 2, 1};
  // KV while each step runs: the known tokens + drafts; after it, the
  // rejected drafts' blocks are freed (11 tokens -> 3 blocks, ...).
  const int32_t blocks[] = {3, 4, 4, 4, 4, 4, 4};
  for (size_t k = 0; k < 7; ++k) {
    SCOPED_TRACE("step " + std::to_string(k));
    EXPECT_EQ(out.steps[k].end, ends[k] * kUs);
    EXPECT_EQ(out.steps[k].num_tokens, tokens[k]);
    EXPECT_EQ(out.steps[k].kv_blocks_used, blocks[k]);
  }
  // The one-token decode at the end is a decode again.
  EXPECT_EQ(out.steps[6].num_decode_seqs, 1);
  EXPECT_EQ(out.steps[1].num_decode_seqs, 0);  // verify: a 4-token query
  EXPECT_EQ(out.requests[0].finish, 10200 * kUs);
  EXPECT_EQ(out.requests[0].deliveries, 7);
  EXPECT_EQ(s.spec_drafts, 5);
  EXPECT_EQ(s.spec_draft_tokens, 12);
  EXPECT_EQ(s.spec_accepted_tokens, 0);
  EXPECT_DOUBLE_EQ(s.spec_mean_acceptance_length, 1.0);
  EXPECT_NEAR(s.tpot_ms.mean, (10.2 - 2.0) / 6, 1e-9);
  EXPECT_EQ(s.itl_ms.count, 6);
}

// KV rollback across a block boundary: 3 drafts rejected from 11 known
// tokens (KV 10 + 4 = 14 tokens, 4 blocks of 4) leave 11 tokens, 3 blocks.
TEST(SpecDecode, RejectedDraftsFreeTheirBlocks) {
  const Scenario sc = MustParse(
      OneRequest(R"({"num_speculative_tokens": 3, "acceptance_rate": 0.0})"),
      {"workload.num_requests=2", "workload.arrival.rate=1"});
  SimulationOutput out;
  RunScenario(sc, &out, /*check_invariants=*/true);
  // Request 0 alone (request 1 arrives at 1 s): blocks during step 2 = 4;
  // when request 1 is admitted, nothing of request 0 is left.
  ASSERT_GE(out.steps.size(), 8u);
  EXPECT_EQ(out.steps[1].kv_blocks_used, 4);
  EXPECT_EQ(out.steps[7].kv_blocks_used, 3);  // request 1's prompt only
}

// The draft model's cost: k passes of draft_cost_fraction of a one-token
// decode of the sequences that sampled. Here 3 x 0.1 x (1 + 0.5) ms =
// 0.45 ms after every step that samples (the last too: whether it finishes
// is known only after verification).
TEST(SpecDecode, GoldenDraftCost) {
  const Scenario sc = MustParse(OneRequest(
      R"({"num_speculative_tokens": 3, "acceptance_rate": 1.0,
          "draft_cost_fraction": 0.1})"));
  SimulationOutput out;
  const RunSummary s = RunScenario(sc, &out, /*check_invariants=*/true);
  ASSERT_EQ(out.steps.size(), 3u);
  EXPECT_EQ(out.steps[0].end, 2450 * kUs);
  EXPECT_EQ(out.steps[1].end, 4300 * kUs);
  EXPECT_EQ(out.steps[2].end, 5950 * kUs);
  EXPECT_NEAR(s.spec_draft_s, 3 * 0.45e-3, 1e-12);
}

// k = 0 is off: the run is the plain engine's, byte for byte.
TEST(SpecDecode, ZeroTokensIsOff) {
  const Scenario a = MustParse(OneRequest(
      R"({"num_speculative_tokens": 0, "acceptance_rate": 0.5})"));
  SimulationOutput out;
  const RunSummary s = RunScenario(a, &out, true);
  EXPECT_EQ(out.steps.size(), 7u);  // prefill + 6 decodes
  EXPECT_EQ(s.spec_drafts, 0);
  EXPECT_EQ(s.spec_tokens, 0);
}

// Constant per-token acceptance a, k drafts: the accepted count is
// geometric truncated at k, so a verify delivers on average
// (1 - a^(k+1)) / (1 - a) tokens (Leviathan et al. 2023, arXiv:2211.17192):
// 1.875 for a = 0.5, k = 3, and the per-token acceptance rate is
// (1.875 - 1) / 3. Long outputs: drafts are cut short (fewer than k) only
// in a request's last 3 tokens.
TEST(SpecDecode, MeanAcceptanceLengthMatchesClosedForm) {
  for (const double a : {0.5, 0.8}) {
    SCOPED_TRACE(a);
    const Scenario sc = MustParse(LinearScenario(
        R"("step_s": 0.001, "prefill_token_s": 0.0001, "decode_seq_s": 0.0005)",
        R"("arrival": {"process": "poisson", "rate": 50},
           "input_len": {"dist": "fixed", "value": 100},
           "output_len": {"dist": "fixed", "value": 2000}, "num_requests": 20)",
        R"("speculative_decoding": {"num_speculative_tokens": 3,
             "acceptance_rate": )" + std::to_string(a) + "}"));
    SimulationOutput out;
    const RunSummary s = RunScenario(sc, &out);
    const double want = (1 - std::pow(a, 4)) / (1 - a);
    ASSERT_GT(s.spec_drafts, 10000);
    // Standard error about 0.01 tokens (variance of the truncated
    // geometric < 1, n > 10^4): 4 sigma.
    EXPECT_NEAR(s.spec_mean_acceptance_length, want, 0.04);
    EXPECT_NEAR(s.spec_acceptance_rate, (want - 1) / 3, 0.015);
    for (const Request& r : out.requests) {
      EXPECT_EQ(r.num_output, 2000);
      EXPECT_LE(r.max_delivered, 4);
    }
  }
}

// The four-lane comparison (spec_decode.h) against the plain one it stands
// for, lane by lane: position 4q + i is accepted when bits 16i .. 16i + 14
// of q's hash are below ceil(rate * 2^15); and the draws' frequency is the
// rate, at the edges too (0 never, 1 always, one step above 0).
TEST(SpecDecode, FourLaneDrawsAreThePlainComparison) {
  SpecDecodeConfig c;
  c.seed = 11;
  for (const double rate : {0.0, 0x1.0p-15, 0.3, 0.7, 0.99999, 1.0}) {
    SCOPED_TRACE(rate);
    const SpecMemberDraws d = SpecMemberDraws::For(c, 5, rate);
    const uint64_t t = static_cast<uint64_t>(std::ceil(rate * 32768));
    int64_t accepted = 0, drawn = 0;
    for (int32_t q = 0; q < 20000; ++q) {
      const uint64_t h = spec_detail::QuadHash(d.key, q);
      const uint32_t quad = d.Quad(q);
      for (int32_t i = 0; i < 4; ++i) {
        const bool plain = ((h >> (16 * i)) & 0x7fff) < t;
        ASSERT_EQ(((quad >> i) & 1) != 0, plain) << "q " << q << " lane " << i;
        accepted += plain;
        ++drawn;
      }
      if (q % 8 == 7) {  // a word of 32 positions, as the decode group reads them
        uint32_t want = 0;
        for (int32_t i = 0; i < 8; ++i) want |= d.Quad(q - 7 + i) << (4 * i);
        ASSERT_EQ(~d.Rejects(q / 8), want) << "word " << q / 8;
      }
    }
    EXPECT_NEAR(static_cast<double>(accepted) / drawn, rate, 4 * std::sqrt(0.25 / drawn));
    // Neighbours independent: a position and the next (in a quad's lanes
    // and across quads) both accepted at rate^2.
    int64_t both = 0, pairs = 0;
    for (int32_t p = 0; p < 80000 - 1; ++p, ++pairs) {
      both += (d.Quad(p / 4) >> (p % 4) & 1) && (d.Quad((p + 1) / 4) >> ((p + 1) % 4) & 1);
    }
    EXPECT_NEAR(static_cast<double>(both) / pairs, rate * rate, 4 * std::sqrt(0.25 / pairs));
    // The run of accepts from a position, across quads, as one by one.
    for (int32_t first = 0; first < 300; ++first) {
      int32_t a = 0;
      while (a < 9 && ((d.Quad((first + a) / 4) >> ((first + a) % 4)) & 1)) ++a;
      ASSERT_EQ(d.Accepted(first, 9), a) << first;
      ASSERT_EQ(d.Accepted(first, 2), std::min(a, 2)) << first;
    }
  }
}

// Per-request rates from Beta(a, b) on their own stream: their mean is
// a / (a + b), and the traffic (arrivals, lengths) is the one without
// speculative decoding (common random numbers).
TEST(SpecDecode, BetaRatesPerRequestKeepTheTraffic) {
  const std::string workload =
      R"("arrival": {"process": "poisson", "rate": 20},
         "input_len": {"dist": "uniform", "min": 10, "max": 200},
         "output_len": {"dist": "uniform", "min": 10, "max": 300},
         "num_requests": 400)";
  const std::string cost =
      R"("step_s": 0.001, "prefill_token_s": 0.00001, "decode_seq_s": 0.0001)";
  const Scenario plain = MustParse(LinearScenario(cost, workload, R"("async_scheduling": false)"));
  const Scenario spec = MustParse(LinearScenario(cost, workload,
      R"("speculative_decoding": {"num_speculative_tokens": 4,
           "acceptance_beta": {"a": 6, "b": 2}})"));
  SimulationOutput a, b;
  RunScenario(plain, &a);
  RunScenario(spec, &b);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  double sum = 0, sum2 = 0;
  int n = 0;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].arrival, b.requests[i].arrival);
    EXPECT_EQ(a.requests[i].prompt_len, b.requests[i].prompt_len);
    EXPECT_EQ(a.requests[i].output_len, b.requests[i].output_len);
    const double r = b.requests[i].spec_rate;
    if (r < 0) continue;  // never verified a draft (1-2 output tokens)
    EXPECT_LE(r, 1.0);
    sum += r;
    sum2 += r * r;
    ++n;
  }
  ASSERT_GT(n, 350);
  const double mean = sum / n, var = sum2 / n - mean * mean;
  // Beta(6, 2): mean 0.75, variance ab / ((a+b)^2 (a+b+1)) = 0.0208.
  EXPECT_NEAR(mean, 0.75, 4 * std::sqrt(0.0208 / n));
  EXPECT_NEAR(var, 0.0208, 0.006);
  // The same request gets the same rate whatever else changes.
  SpecDecodeConfig c = spec.engine.spec;
  c.seed = spec.seed;
  EXPECT_EQ(static_cast<float>(SpecAcceptanceRate(c, 17)), b.requests[17].spec_rate);
}

// Spec decoding's speed-up where decoding is memory-bound: a verify of
// k + 1 tokens costs little more than a decode, so with a high acceptance
// rate a request's decode time drops by about the mean acceptance length.
TEST(SpecDecode, HighAcceptanceShortensDecoding) {
  const std::string w =
      R"("arrival": {"process": "constant", "rate": 1},
         "input_len": {"dist": "fixed", "value": 100},
         "output_len": {"dist": "fixed", "value": 401}, "num_requests": 5)";
  const std::string cost =
      R"("step_s": 0.005, "prefill_token_s": 0.00001, "decode_seq_s": 0.00001)";
  const RunSummary off =
      RunScenario(MustParse(LinearScenario(cost, w, R"("async_scheduling": false)")));
  const RunSummary on = RunScenario(MustParse(LinearScenario(cost, w,
      R"("speculative_decoding": {"num_speculative_tokens": 4, "acceptance_rate": 0.9})")));
  // Closed form: (1 - 0.9^5) / 0.1 = 4.095 tokens per step.
  EXPECT_NEAR(off.tpot_ms.mean / on.tpot_ms.mean, 4.095, 0.3);
}

std::string ParseError(const std::string& spec, const std::string& extra = "") {
  const std::string json =
      R"({"model": "llama-3.1-8b", "hardware": {"gpu": "h200"},
          "engine": {)" + extra + R"("speculative_decoding": )" + spec + R"(},
          "workload": {"arrival": {"process": "poisson", "rate": 1},
            "input_len": {"dist": "fixed", "value": 10},
            "output_len": {"dist": "fixed", "value": 10}, "num_requests": 10}})";
  auto sc = ParseScenario(json, "s.json", {});
  return sc.ok() ? "" : sc.status().message();
}

TEST(SpecDecode, BadInputNamesThePath) {
  EXPECT_EQ(ParseError(R"({"num_speculative_tokens": 3, "acceptance_rate": 0.5})"), "");
  EXPECT_NE(ParseError(R"({"num_speculative_tokens": 3})")
                .find("s.json: /engine/speculative_decoding: expected exactly one of "
                      "acceptance_rate"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"num_speculative_tokens": 3, "acceptance_rate": 1.5})")
                .find("/engine/speculative_decoding/acceptance_rate: expected a number in [0, 1]"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"num_speculative_tokens": 65, "acceptance_rate": 0.5})")
                .find("/engine/speculative_decoding/num_speculative_tokens"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"num_speculative_tokens": 3, "acceptance_beta": {"a": 0, "b": 1}})")
                .find("/engine/speculative_decoding/acceptance_beta/a"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"num_speculative_tokens": 3, "acceptance_rate": 0.5,
                           "acceptance_beta": {"a": 1, "b": 1}})")
                .find("expected exactly one"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"num_speculative_tokens": 3, "acceptance_rate": 0.5,
                           "draft_model": "x"})")
                .find("/engine/speculative_decoding/draft_model"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"num_speculative_tokens": 3, "acceptance_rate": 0.5})",
                       R"("async_scheduling": true, )")
                .find("/engine/async_scheduling: expected false with speculative_decoding"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim
