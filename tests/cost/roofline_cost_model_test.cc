// Tests of the roofline cost model's datasheet preset (the model before it
// knew kernels: no floors, max(compute, memory)) against numbers worked out
// by hand from datasheets and published parameter counts, not from the
// model's formulas. The kernels preset: roofline_kernels_test.cc.
#include "sim/cost/roofline_cost_model.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/core/status.h"
#include "sim/cost/step_work.h"
#include "sim/model/model_loader.h"

namespace servesim {
namespace {

// Datasheet and model-card numbers used by the hand calculations.
constexpr double kH200Bw = 4.8e12;     // bytes/s
constexpr double kH200Flops = 989e12;  // dense bf16
constexpr double kH200LinkBw = 450e9;  // NVLink4, one direction
constexpr double kLlama8bParams = 8.03e9;
constexpr double kLlama8bEmbed = 128256.0 * 4096;  // per embedding matrix
constexpr double kMixtralParams = 46.7e9;
constexpr double kMixtralActive = 12.9e9;
constexpr double kMixtralEmbed = 32000.0 * 4096;
// The datasheet preset's documented values.
constexpr double kGemmCompute = 0.7, kGemmMemory = 0.8;
constexpr double kAttnCompute = 0.5, kAttnMemory = 0.7;
constexpr double kOverhead = 3e-4;

std::unique_ptr<CostModel> Make(
    const std::string& model, int tp = 1,
    nlohmann::json cfg = {{"type", "roofline"}, {"preset", "datasheet"}}) {
  return MakeCostModel(JsonView(cfg, "s.json", "/cost_model"),
                       LoadModelSpec(model), LoadGpuSpec("h200"), tp,
                       HostWork::kBetweenSteps);
}

BatchShape Decode(int batch, int context) {
  BatchShape b;
  b.seqs.assign(batch, SeqWork{1, context, true});
  return b;
}

BatchShape Prefill(int tokens) {
  BatchShape b;
  b.seqs = {{tokens, 0, true}};
  return b;
}

TEST(RooflineTest, EmptyBatchCostsNothing) {
  const auto m = Make("llama-3.1-8b");
  EXPECT_EQ(m->StepTime(BatchShape{}).Total(), 0);
  EXPECT_EQ(m->StepTime(BatchShape{{{0, 100, false}}}).Total(), 0);
}

// Batch-1 decode streams every weight except the embedding (a gather) once.
TEST(RooflineTest, DecodeBatchOneIsWeightStreaming) {
  const StepCost c = Make("llama-3.1-8b")->StepTime(Decode(1, 1000));
  const double weight_bytes = 2 * (kLlama8bParams - kLlama8bEmbed);
  const double gemm = weight_bytes / (kH200Bw * kGemmMemory);
  const double kv = 131072.0 * 1001 / (kH200Bw * kAttnMemory);
  EXPECT_NEAR(c.gemm_s, gemm, 0.01 * gemm);
  EXPECT_NEAR(c.attn_decode_s, kv, 0.02 * kv);
  EXPECT_EQ(c.attn_prefill_s, 0);
  EXPECT_EQ(c.comm_s, 0);
  EXPECT_DOUBLE_EQ(c.overhead_s, kOverhead);
  const double total = gemm + kv + kOverhead;  // about 4.25 ms
  EXPECT_NEAR(c.Total(), total, 0.01 * total);
}

// 8192 prompt tokens put every GEMM far above the ridge point (~180
// FLOP/byte on H200 with these efficiencies), so time ~ 2 * params * T.
TEST(RooflineTest, LongPrefillIsComputeBound) {
  const int t = 8192;
  const StepCost c = Make("llama-3.1-8b")->StepTime(Prefill(t));
  const double layer_params = kLlama8bParams - 2 * kLlama8bEmbed;
  const double gemm = 2 * layer_params * t / (kH200Flops * kGemmCompute);
  EXPECT_NEAR(c.gemm_s, gemm, 0.02 * gemm);
  // Causal attention: T(T+1)/2 query-key pairs, 4 * 32 heads * 128 FLOPs
  // each (QK^T and PV), in 32 layers.
  const double attn =
      32 * 4.0 * 32 * 128 * t * (t + 1) / 2 / (kH200Flops * kAttnCompute);
  EXPECT_NEAR(c.attn_prefill_s, attn, 0.01 * attn);
  EXPECT_GT(c.gemm_s, 20 * 2 * kLlama8bParams / kH200Bw);  // not memory-bound
}

// Causal attention work does not depend on how the prompt is chunked.
TEST(RooflineTest, ChunkedPrefillAttentionAddsUp) {
  const auto m = Make("llama-3.1-8b");
  const double whole = m->StepTime(Prefill(8192)).attn_prefill_s;
  const double first =
      m->StepTime(BatchShape{{{4096, 0, false}}}).attn_prefill_s;
  const double second =
      m->StepTime(BatchShape{{{4096, 4096, true}}}).attn_prefill_s;
  EXPECT_NEAR(first + second, whole, 1e-3 * whole);
}

TEST(RooflineTest, DecodeGrowsSlowlyUntilComputeBound) {
  const auto m = Make("llama-3.1-8b");
  const double t1 = m->StepTime(Decode(1, 100)).Total();
  const double t64 = m->StepTime(Decode(64, 100)).Total();
  EXPECT_GT(t64, t1);
  EXPECT_LT(t64, 1.3 * t1);  // 64x the tokens, same weights read
  // Past the ridge point doubling the batch doubles the GEMM time.
  const StepCost a = m->StepTime(Decode(2048, 100));
  const StepCost b = m->StepTime(Decode(4096, 100));
  EXPECT_NEAR(b.gemm_s / a.gemm_s, 2.0, 0.05);
  const double compute =
      2 * (kLlama8bParams - kLlama8bEmbed) * 4096 / (kH200Flops * kGemmCompute);
  EXPECT_NEAR(b.gemm_s, compute, 0.03 * compute);
}

TEST(RooflineTest, TensorParallelHalvesGemmsAndAddsAllReduces) {
  const int t = 8192;
  const StepCost one = Make("llama-3.1-8b", 1)->StepTime(Prefill(t));
  const StepCost two = Make("llama-3.1-8b", 2)->StepTime(Prefill(t));
  EXPECT_NEAR(two.gemm_s / one.gemm_s, 0.5, 0.01);
  EXPECT_NEAR(two.attn_prefill_s / one.attn_prefill_s, 0.5, 0.01);
  EXPECT_EQ(one.comm_s, 0);
  // Two ring all-reduces per layer of T * 4096 bf16 values; at tp 2 each GPU
  // sends 2 * (1/2) of the buffer over one direction of its NVLink.
  const double per = 8e-6 + 1.0 * t * 4096 * 2 / (kH200LinkBw * 0.7);
  EXPECT_NEAR(two.comm_s, 32 * 2 * per, 1e-3 * 32 * 2 * per);
}

TEST(RooflineTest, ExpectedActiveExperts) {
  EXPECT_DOUBLE_EQ(ExpectedActiveExperts(8, 2, 1), 2);  // one token, top-2
  EXPECT_DOUBLE_EQ(ExpectedActiveExperts(8, 2, 2), 8 * (1 - 0.75 * 0.75));
  EXPECT_NEAR(ExpectedActiveExperts(8, 2, 1000), 8, 1e-9);
  EXPECT_DOUBLE_EQ(ExpectedActiveExperts(1, 1, 5), 1);
}

// One decode token reads 2 of 8 experts: the published 12.9B active
// parameters (less the embedding gather). 64 tokens touch all experts.
TEST(RooflineTest, MoeReadsOnlyRoutedExperts) {
  const auto m = Make("mixtral-8x7b");
  const double one =
      2 * (kMixtralActive - kMixtralEmbed) / (kH200Bw * kGemmMemory);
  EXPECT_NEAR(m->StepTime(Decode(1, 1)).gemm_s, one, 0.02 * one);
  const double all =
      2 * (kMixtralParams - kMixtralEmbed) / (kH200Bw * kGemmMemory);
  EXPECT_NEAR(m->StepTime(Decode(64, 1)).gemm_s, all, 0.02 * all);
}

TEST(RooflineTest, ParametersOverrideDefaults) {
  const auto base = Make("llama-3.1-8b");
  const auto tuned = Make("llama-3.1-8b", 1,
                          {{"type", "roofline"},
                           {"preset", "datasheet"},
                           {"step_overhead_s", 0},
                           {"gemm_memory_efficiency", 0.4}});
  const StepCost b = base->StepTime(Decode(1, 1000));
  const StepCost t = tuned->StepTime(Decode(1, 1000));
  EXPECT_EQ(t.overhead_s, 0);
  EXPECT_NEAR(t.gemm_s, 2 * b.gemm_s, 1e-9);  // half the bandwidth
  EXPECT_NE(tuned->Describe().find("llama-3.1-8b on h200, tp=1"),
            std::string::npos)
      << tuned->Describe();
}

std::string ErrorOf(const std::string& model, int tp, nlohmann::json cfg) {
  try {
    Make(model, tp, cfg);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RooflineTest, ConfigErrors) {
  std::string e = ErrorOf(
      "llama-3.1-8b", 1, {{"type", "roofline"}, {"gemm_compute_efficency", 1}});
  EXPECT_NE(e.find("s.json: /cost_model/gemm_compute_efficency: unknown key"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("did you mean \"gemm_compute_efficiency\""),
            std::string::npos)
      << e;
  for (double bad : {0.0, 1e-308, 1.5, -0.2}) {
    e = ErrorOf("llama-3.1-8b", 1,
                {{"type", "roofline"}, {"interconnect_efficiency", bad}});
    EXPECT_NE(e.find("/cost_model/interconnect_efficiency: expected a number "
                     "in [0.001, 1]"),
              std::string::npos)
        << e;
  }
  e = ErrorOf("llama-3.1-8b", 1,
              {{"type", "roofline"}, {"allreduce_latency_s", -1}});
  EXPECT_NE(e.find("/cost_model/allreduce_latency_s: expected a number in [0, 1]"),
            std::string::npos)
      << e;
  e = ErrorOf("llama-3.1-8b", 1, {{"type", "roofline"}, {"step_overhead_s", 1e308}});
  EXPECT_NE(e.find("/cost_model/step_overhead_s: expected a number in [0, 1], "
                   "got 1e+308"),
            std::string::npos)
      << e;
  e = ErrorOf("qwen2.5-7b", 8, {{"type", "roofline"}});
  EXPECT_NE(e.find("tp=8 cannot shard qwen2.5-7b: tp must divide num_heads "
                   "(28)"),
            std::string::npos)
      << e;
  e = ErrorOf("llama-3.1-8b", 0, {{"type", "roofline"}});
  EXPECT_NE(e.find("expected tp >= 1"), std::string::npos) << e;
  // 16 GPUs share 8 KV heads by replication: allowed.
  EXPECT_EQ(ErrorOf("llama-3.1-8b", 16, {{"type", "roofline"}}), "");
}


// The speculative decode group hands its verifying members to the roofline
// as runs (count, summed context per token count). A run must price, to
// the bit, what its members one by one do, beside other entries and the
// decode aggregate; in the model's MFU/MBU counts too. Windowed models
// (gpt-oss) cannot: their attention is not linear in the context.
TEST(RooflineTest, RunsPriceExactlyAsTheirMembersOneByOne) {
  uint64_t state = 12345;
  const auto next = [&](int64_t mod) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(mod));
  };
  const struct { const char* model; int tp; const char* gpu; } cases[] = {
      {"llama-3.1-8b", 1, "h200"},     {"llama-3.1-70b", 8, "h100-sxm"},
      {"mixtral-8x7b", 2, "h200"},     {"deepseek-v3", 8, "h200"},
      {"qwen3-32b", 2, "rtx-pro-6000"}, {"llama-3.1-8b", 1, "a100-80gb"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.model) + " tp" + std::to_string(c.tp) + " on " + c.gpu);
    const ModelSpec m = LoadModelSpec(c.model);
    const GpuSpec g = LoadGpuSpec(c.gpu);
    const auto model = MakeCostModel(
        JsonView(nlohmann::json{{"type", "roofline"}}, "s.json", "/cost_model"), m, g, c.tp,
        HostWork::kBetweenSteps);
    ASSERT_TRUE(model->PricesRuns());
    const StepWorkCounter counter(m, c.tp);
    for (int trial = 0; trial < 50; ++trial) {
      BatchShape ones, runs;
      ones.decode_seqs = runs.decode_seqs = next(100);
      ones.decode_context = runs.decode_context = ones.decode_seqs * (1 + next(5000));
      const SeqWork prefill{static_cast<int32_t>(1 + next(4000)),
                            static_cast<int32_t>(next(30000)), true};
      ones.seqs.push_back(prefill);
      runs.seqs.push_back(prefill);
      for (int32_t n = 2; n <= 5; ++n) {
        const int64_t count = next(60);
        int64_t sum = 0;
        for (int64_t k = 0; k < count; ++k) {
          const int32_t ctx = static_cast<int32_t>(1 + next(120000));
          ones.seqs.push_back({n, ctx, true});
          sum += ctx;
        }
        if (count > 0) runs.runs.push_back({n, count, sum});
      }
      const StepCost a = model->StepTime(ones), b = model->StepTime(runs);
      EXPECT_EQ(a.gemm_s, b.gemm_s);
      EXPECT_EQ(a.attn_prefill_s, b.attn_prefill_s);
      EXPECT_EQ(a.attn_decode_s, b.attn_decode_s);
      EXPECT_EQ(a.comm_s, b.comm_s);
      EXPECT_EQ(a.other_s, b.other_s);
      EXPECT_EQ(a.overhead_s, b.overhead_s);
      const StepWork wa = counter.Count(ones), wb = counter.Count(runs);
      EXPECT_EQ(wa.flops, wb.flops);
      EXPECT_EQ(wa.hbm_bytes, wb.hbm_bytes);
      EXPECT_EQ(ones.size(), runs.size());
    }
  }
  const auto windowed = MakeCostModel(
      JsonView(nlohmann::json{{"type", "roofline"}}, "s.json", "/cost_model"),
      LoadModelSpec("gpt-oss-120b"), LoadGpuSpec("h100-sxm"), 1, HostWork::kBetweenSteps);
  EXPECT_FALSE(windowed->PricesRuns());
}

}  // namespace
}  // namespace servesim
