// Model FLOPs and bytes of a step, recomputed by hand from the published
// configurations (models/llm/*.json), and MFU/MBU of whole runs.
#include "sim/cost/step_work.h"

#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "sim/model/model_loader.h"
#include "sim/report/summary.h"
#include "tests/test_util.h"

namespace servesim {
namespace {

TEST(StepWork, Llama8BDecodeAndPrefillByHand) {
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  const StepWorkCounter w(m, 1);
  // Per layer: q, k, v, o = 4096 x (32 + 8 + 8) x 128 + 32 x 128 x 4096;
  // gated MLP = 3 x 4096 x 14336.
  const double layer = 4096.0 * 48 * 128 + 32.0 * 128 * 4096 + 3.0 * 4096 * 14336;
  const double head = 2.0 * 4096 * 128256;
  BatchShape decode;
  decode.seqs = {{1, 1000, true}};
  const StepWork d = w.Count(decode);
  // One token after 1000: it attends to 1001 keys.
  const double attn = 4.0 * 32 * 128 * 32 * 1001;
  EXPECT_NEAR(d.flops, 2 * layer * 32 + attn + head, 1e-6 * d.flops);
  // Bytes: the weights once, and 1001 tokens of K and V
  // (2 x 8 heads x 128 x 2 bytes x 32 layers = 131072 bytes per token).
  EXPECT_NEAR(d.hbm_bytes, m.WeightBytesPerGpu(1) + 1001 * 131072.0, 1.0);
  // A 512-token prefill chunk after 256 cached: token i sees 256 + i keys,
  // i = 1..512, so 512 x 256 + 512 x 513 / 2 pairs; no sampling yet.
  BatchShape prefill;
  prefill.seqs = {{512, 256, false}};
  const StepWork p = w.Count(prefill);
  const double pairs = 512.0 * 256 + 512.0 * 513 / 2;
  EXPECT_NEAR(p.flops, 2 * layer * 32 * 512 + 4.0 * 32 * 128 * 32 * pairs, 1e-6 * p.flops);
  // Tensor parallelism splits the work evenly.
  const StepWorkCounter w2(m, 2);
  EXPECT_NEAR(w2.Count(prefill).flops, p.flops / 2, 1e-6 * p.flops);
  EXPECT_EQ(w.Count(BatchShape{}).hbm_bytes, 0);
}

// Count's summed form (keys summed, then scaled once) gives CountEach's
// bits on every model it applies to, over random steps of prefill chunks,
// decodes one by one, the decode aggregate and speculative runs; a model
// with sliding-window layers or MLA is counted each by each.
TEST(StepWork, SummedCountIsEachCountToTheBit) {
  std::mt19937_64 rng(7);
  const auto draw = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const auto bits = [](double x) { return std::bit_cast<uint64_t>(x); };
  for (const char* name : {"llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b",
                           "gpt-oss-120b", "deepseek-v3"}) {
    const ModelSpec m = LoadModelSpec(name);
    for (int tp : {1, 2, 8}) {
      const StepWorkCounter w(m, tp);
      for (int trial = 0; trial < 300; ++trial) {
        BatchShape b;
        b.decode_seqs = draw(0, 1) ? draw(1, 256) : 0;
        b.decode_context = b.decode_seqs * draw(1, 4000);
        for (int64_t k = draw(0, 6); k > 0; --k) {
          const bool decode = draw(0, 1);
          b.seqs.push_back({decode ? 1 : static_cast<int32_t>(draw(1, 8192)),
                            static_cast<int32_t>(draw(0, 131072)),
                            decode || draw(0, 1) == 1});
        }
        if (!m.has_sliding_window() && draw(0, 3) == 0) {  // (runs: no windows)
          const int64_t count = draw(1, 64);
          b.runs.push_back({static_cast<int32_t>(draw(2, 5)), count, count * draw(1, 4000)});
        }
        const StepWork each = w.CountEach(b);
        const StepWork counted = w.Count(b);
        SCOPED_TRACE(std::string(name) + " tp " + std::to_string(tp) + " trial " +
                     std::to_string(trial));
        ASSERT_EQ(bits(counted.flops), bits(each.flops));
        ASSERT_EQ(bits(counted.hbm_bytes), bits(each.hbm_bytes));
        if (m.sliding_window_layers == 0 && !m.is_mla()) {
          ASSERT_EQ(bits(w.CountSummed(b).flops), bits(each.flops));
        }
      }
    }
  }
}

TEST(StepWork, MoeCountsOnlyActiveExperts) {
  const ModelSpec m = LoadModelSpec("mixtral-8x7b");
  ASSERT_TRUE(m.is_moe());
  const StepWorkCounter w(m, 2);
  BatchShape one;
  one.seqs = {{1, 0, false}};  // a one-token prompt: no context, no sampling
  const double attn_params = 4096.0 * (32 + 16) * 128 + 32.0 * 128 * 4096;
  const double active_mlp = 2.0 * 3 * 4096 * 14336;  // top-2 of 8 experts
  const double attn = 4.0 * 32 * 128 * 32 * 1;
  EXPECT_NEAR(w.Count(one).flops, (2 * (attn_params + active_mlp) * 32 + attn) / 2,
              1e-3 * w.Count(one).flops);
}

TEST(StepWork, RunMfuGrowsWithLoadAndStaysBelowOne) {
  double last = 0;
  for (double rate : {5.0, 20.0, 40.0}) {
    const Scenario sc = testing::MustParse(EmbeddedDefaultScenario(),
                                           {"workload.num_requests=1500",
                                            "workload.arrival.rate=" + std::to_string(rate)});
    const SimulationInput in = sc.ToSimulationInput();
    const SimulationOutput out = RunSimulation(in);
    const RunSummary s = Summarize(out, in, sc.ArrivalDescription(), sc.OfferedRate());
    EXPECT_GT(s.mfu, last) << rate;
    EXPECT_LT(s.mfu, 1);
    EXPECT_GT(s.mbu, 0);
    EXPECT_LT(s.mbu, 1);
    last = s.mfu;
  }
}

}  // namespace
}  // namespace servesim
