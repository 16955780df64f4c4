// fp8 weights (model.weight_dtype) and KV cache (engine.kv_cache_dtype):
// the memory plan and the roofline's step times worked by hand, and the
// scenario keys' errors.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/cost/kernel_time.h"
#include "sim/cost/roofline_cost_model.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

Scenario Load(const std::vector<std::string>& sets) {
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "default", sets);
  EXPECT_TRUE(sc.ok()) << sc.status().message();
  return sc.ok() ? std::move(*sc) : Scenario{};
}

std::string ErrorOf(const std::vector<std::string>& sets) {
  auto sc = ParseScenario(EmbeddedDefaultScenario(), "s.json", sets);
  EXPECT_FALSE(sc.ok());
  return sc.ok() ? "" : sc.status().message();
}

// Llama-3.1-8B (models/llm/llama-3.1-8b.json): embedding and LM head
// 2 x 128256 x 4096 = 1,050,673,152 parameters; per layer attention
// 2 x 4096 x 4096 + 2 x 4096 x 1024 = 41,943,040 and MLP 3 x 4096 x 14336
// = 176,160,768, times 32 layers = 6,979,321,856.
constexpr double kEmbedParams = 1050673152.0, kLayerParams = 6979321856.0;

TEST(Fp8, WeightAndKvBytesByHand) {
  const Scenario bf16 = Load({});
  const Scenario w8 = Load({"model.weight_dtype=fp8"});
  const Scenario kv8 = Load({"engine.kv_cache_dtype=fp8"});
  EXPECT_DOUBLE_EQ(bf16.model.WeightBytesPerGpu(1), 2 * (kEmbedParams + kLayerParams));
  // vLLM's fp8 checkpoints keep the embedding and LM head in bf16.
  EXPECT_DOUBLE_EQ(w8.model.WeightBytesPerGpu(1), 2 * kEmbedParams + kLayerParams);
  // K and V, 8 heads x 128, 32 layers: 131072 bytes a token in bf16.
  EXPECT_DOUBLE_EQ(bf16.model.KvBytesPerTokenPerGpu(1), 131072);
  EXPECT_DOUBLE_EQ(w8.model.KvBytesPerTokenPerGpu(1), 131072);
  EXPECT_DOUBLE_EQ(kv8.model.KvBytesPerTokenPerGpu(1), 65536);
  EXPECT_EQ(w8.model.Label(), "llama-3.1-8b (fp8 weights)");
  EXPECT_EQ(kv8.model.Label(), "llama-3.1-8b (fp8 KV cache)");
}

TEST(Fp8, MoreKvBlocksByHand) {
  // H200: 141 GiB x 0.9 usable; activation reserve (the same in all three):
  // 8192 tokens x (2 x 4096 + 48 x 128 + 3 x 14336) x 2 bytes = 939,524,096
  // + fp32 logits 1024 x 128256 x 4 = 525,336,576 (vllm serve's
  // max_num_seqs on an H200) + 1 GiB.
  const double usable = 141.0 * 1073741824 * 0.9;
  const double reserve = 939524096.0 + 525336576.0 + 1073741824.0;
  const auto blocks = [&](double weights, double kv_per_token) {
    return static_cast<int32_t>(
        std::floor((usable - weights - reserve) / (16 * kv_per_token)));
  };
  const Scenario bf16 = Load({});
  const Scenario w8 = Load({"model.weight_dtype=fp8"});
  const Scenario both = Load({"model.weight_dtype=fp8", "engine.kv_cache_dtype=fp8"});
  EXPECT_DOUBLE_EQ(bf16.activation_reserve_bytes, reserve);
  EXPECT_EQ(bf16.engine.num_gpu_blocks, blocks(2 * (kEmbedParams + kLayerParams), 131072));
  EXPECT_EQ(w8.engine.num_gpu_blocks, blocks(2 * kEmbedParams + kLayerParams, 131072));
  EXPECT_EQ(both.engine.num_gpu_blocks, blocks(2 * kEmbedParams + kLayerParams, 65536));
  // 7 GB of weights freed is ~3,300 more blocks; fp8 KV doubles them.
  EXPECT_GT(w8.engine.num_gpu_blocks, bf16.engine.num_gpu_blocks + 3000);
  EXPECT_EQ(both.engine.num_gpu_blocks / 2, w8.engine.num_gpu_blocks);
}

// One layer's four GEMMs for one decode token on H200 as the roofline
// prices them: QKV 4096 -> 6144, O 4096 -> 4096, gate+up 4096 -> 28672,
// down 14336 -> 4096.
double LayerGemmsByHand(const KernelRates& r, const GpuSpec& h200, double w_bytes,
                        double in_bytes, bool quantized) {
  double t = 0;
  for (const auto& [n, k] : {std::pair{6144.0, 4096.0}, {4096.0, 4096.0},
                             {28672.0, 4096.0}, {4096.0, 14336.0}}) {
    const double flops = 2 * n * k, bytes = w_bytes * k * n + in_bytes * k + 2 * n;
    const double c = flops / (h200.GemmPeakFlops(r.fp8_compute) * r.compute_efficiency);
    const double m = bytes / (h200.hbm_bytes_per_s * r.memory_efficiency);
    t += r.floor_s + r.per_item_s * (quantized ? k : 0) + SmoothMax(c, m, r.crossover_p);
  }
  return t;
}

TEST(Fp8, ShorterDecodeStepsByHand) {
  const Scenario bf16 = Load({});
  const Scenario w8 = Load({"model.weight_dtype=fp8"});
  const Scenario kv8 = Load({"engine.kv_cache_dtype=fp8"});
  ASSERT_EQ(w8.gpu.fp8_flops, 1979e12);  // H200 datasheet, dense
  const RooflineParams p = RooflineParams::Kernels();
  BatchShape one;
  one.seqs = {SeqWork{1, 1000, true}};
  const StepCost b = bf16.cost_model->StepTime(one), f = w8.cost_model->StepTime(one);
  // The LM head (4096 -> 128256, bf16 in both) is the same; the layers'
  // GEMMs read half the weight bytes through the W8A8 kernel's rates.
  const double lm_head = b.gemm_s - 32 * LayerGemmsByHand(p.gemm, bf16.gpu, 2, 2, false);
  EXPECT_NEAR(f.gemm_s, lm_head + 32 * LayerGemmsByHand(p.gemm_fp8, w8.gpu, 1, 1, true),
              1e-12);
  // At one token the GEMMs stream weights: per layer 218 MB at 81% of HBM
  // bandwidth (56 us) plus four 6.8 us floors, against 436 MB at 85%
  // (106 us) plus four 3.8 us floors: 0.69x.
  EXPECT_LT(f.gemm_s - lm_head, 0.7 * (b.gemm_s - lm_head));
  EXPECT_GT(f.gemm_s - lm_head, 0.65 * (b.gemm_s - lm_head));
  EXPECT_LT(f.Total(), b.Total());
  // fp8 KV: decode attention reads half the KV bytes. 64 sequences at
  // context 8000 are memory-bound: 64 x 2 x 8 x 128 x 8001 bytes x 32
  // layers at 74% (fp8) vs 94% (bf16, twice the bytes) of 4.8 TB/s.
  BatchShape batch;
  batch.seqs.assign(64, SeqWork{1, 8000, true});
  const double kv8_attn = kv8.cost_model->StepTime(batch).attn_decode_s;
  const double bf16_attn = bf16.cost_model->StepTime(batch).attn_decode_s;
  const KernelRates& r = p.decode_attention_fp8_kv;
  const double bytes = 64 * (2.0 * 8 * 128 * 8001 + 2.0 * 32 * 128);
  const double flops = 64 * 4.0 * 32 * 128 * 8001;
  const double by_hand =
      32 * (r.floor_s + r.per_item_s * 64 * 8 +
            SmoothMax(flops / (1979e12 * r.compute_efficiency),
                      bytes / (4.8e12 * r.memory_efficiency), r.crossover_p));
  EXPECT_NEAR(kv8_attn, by_hand, 1e-12);
  EXPECT_LT(kv8_attn, 0.7 * bf16_attn);
}

TEST(Fp8, WeightOnlyWithoutFp8TensorCores) {
  // A100 has no fp8 tensor cores: fp8 weights are read as one byte but
  // the GEMMs run at the bf16 rates (vLLM's Marlin W8A16 path).
  const Scenario bf16 = Load({"hardware.gpu=a100-80gb"});
  const Scenario w8 = Load({"hardware.gpu=a100-80gb", "model.weight_dtype=fp8"});
  EXPECT_EQ(w8.gpu.fp8_flops, 0);
  BatchShape one;
  one.seqs = {SeqWork{1, 100, true}};
  const double b = bf16.cost_model->StepTime(one).gemm_s;
  const double f = w8.cost_model->StepTime(one).gemm_s;
  const RooflineParams p = RooflineParams::Kernels(bf16.gpu.roofline_fit);  // Ampere's fit
  const double lm_head = b - 32 * LayerGemmsByHand(p.gemm, bf16.gpu, 2, 2, false);
  EXPECT_NEAR(f, lm_head + 32 * LayerGemmsByHand(p.gemm, w8.gpu, 1, 2, false), 1e-12);
}

TEST(Fp8, ModelObjectFormAndSetShorthand) {
  const Scenario a = Load({R"(model={"name": "llama-3.1-8b", "weight_dtype": "fp8"})"});
  const Scenario b = Load({"model.weight_dtype=fp8"});
  EXPECT_EQ(a.model.weight_bytes, 1);
  EXPECT_EQ(a.engine.num_gpu_blocks, b.engine.num_gpu_blocks);
  EXPECT_EQ(Load({"engine.kv_cache_dtype=fp8_e5m2"}).model.kv_cache_dtype, "fp8");
  EXPECT_EQ(Load({"engine.kv_cache_dtype=auto", "model.weight_dtype=fp8"}).model.kv_bytes, 2);
}

TEST(Fp8, BadKeysNameTheirPath) {
  EXPECT_NE(ErrorOf({"model.weight_dtype=int4"}).find("/model/weight_dtype"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"engine.kv_cache_dtype=int8"}).find("/engine/kv_cache_dtype"),
            std::string::npos);
  EXPECT_NE(ErrorOf({"model.dtype=fp8"}).find("/model"), std::string::npos);
  // A calibrated profile prices only the dtypes it measured: a bf16
  // profile refuses an fp8 run, and the other way round.
  const std::string e = ErrorOf(
      {"model.weight_dtype=fp8", "cost_model.type=calibrated",
       "cost_model.profile=models/profiles/h200-llama-3.1-8b-tp1.json"});
  EXPECT_NE(e.find("/cost_model/profile"), std::string::npos) << e;
  EXPECT_NE(e.find("bf16 weights"), std::string::npos) << e;
  const std::string e8 = ErrorOf(
      {"cost_model.type=calibrated",
       "cost_model.profile=models/profiles/h200-llama-3.1-8b-tp1-fp8.json"});
  EXPECT_NE(e8.find("fp8 weights and a fp8 KV cache"), std::string::npos) << e8;
}

TEST(Fp8, ImportedFp8ProfilePricesFp8Runs) {
  const std::vector<std::string> calibrated = {
      "cost_model.type=calibrated",
      "cost_model.profile=models/profiles/h200-llama-3.1-8b-tp1-fp8.json"};
  std::vector<std::string> fp8 = calibrated;
  fp8.push_back("model.weight_dtype=fp8");
  fp8.push_back("engine.kv_cache_dtype=fp8");
  const Scenario s8 = Load(fp8);
  const Scenario s16 = Load({"cost_model.type=calibrated",
                             "cost_model.profile=models/profiles/h200-llama-3.1-8b-tp1.json"});
  // Measured W8A8 GEMMs and fp8-KV attention: a decode batch prices below
  // the bf16 profile's, and the error bar is the fp8 profile's own.
  BatchShape batch;
  batch.seqs.assign(64, SeqWork{1, 2000, true});
  EXPECT_LT(s8.cost_model->StepTime(batch).Kernels(), s16.cost_model->StepTime(batch).Kernels());
  EXPECT_NE(s8.cost_model->Error().source.find("-fp8.json"), std::string::npos);
}

}  // namespace
}  // namespace servesim
