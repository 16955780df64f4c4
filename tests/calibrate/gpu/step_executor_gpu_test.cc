// The executed-step harness behind `servesim-calibrate validate` (label
// "gpu"). Buffer sizing is host arithmetic and runs everywhere; executing
// and timing steps needs a CUDA device and skips without one.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "calibrate/gpu/step_executor.h"
#include "calibrate/gpu_harness_api.h"
#include "kernels/bf16_host.h"
#include "sim/model/model_loader.h"

namespace servesim::calibrate::gpu {
namespace {

bool HaveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define REQUIRE_GPU() \
  if (!HaveDevice()) GTEST_SKIP() << "no CUDA device present: step execution skipped"

// 3 decodes at contexts 100, 2000, 31 and one 700-token chunk after 1500
// cached tokens (a prefix hit), all sampling.
BatchShape MixedStep() {
  return BatchShape{{{1, 100, true}, {1, 2000, true}, {1, 31, true}, {700, 1500, true}}};
}

TEST(StepLimits, LargestStepOfTheSet) {
  const BatchShape small{{{1, 15, true}}};  // 16 tokens: one block
  const StepLimits lim = LimitsOf({small, MixedStep()}, 16);
  EXPECT_EQ(lim.max_tokens, 703);
  // ceil(101/16) + ceil(2001/16) + ceil(32/16) + ceil(2200/16) = 7+126+2+138.
  EXPECT_EQ(lim.max_kv_blocks, 273);
  EXPECT_EQ(lim.max_samples, 4);
}

TEST(StepLimits, DistinctLayersFollowTheMemoryThatIsFree) {
  const ModelSpec m8 = LoadModelSpec("llama-3.1-8b");
  const StepLimits lim = LimitsOf({MixedStep()}, 16);
  // The 8B model (32 layers of 436 MB, 1 GB LM head) fits whole in an H200.
  EXPECT_EQ(DistinctLayersThatFit(m8, 1, lim, 16, size_t(140) << 30), 32);
  // In 8 GiB: (0.92*8 GiB - 1.05 GB LM head - 1 GiB slack) / ~0.44 GB.
  const int in8 = DistinctLayersThatFit(m8, 1, lim, 16, size_t(8) << 30);
  EXPECT_GE(in8, 11);
  EXPECT_LE(in8, 14);
  // 70B at tp=1: 80 layers of 1.71 GB do not all fit in 140 GiB.
  const ModelSpec m70 = LoadModelSpec("llama-3.1-70b");
  const int l70 = DistinctLayersThatFit(m70, 1, lim, 16, size_t(140) << 30);
  EXPECT_GE(l70, 65);
  EXPECT_LT(l70, 80);
  // ...but do at tp=4.
  EXPECT_EQ(DistinctLayersThatFit(m70, 4, lim, 16, size_t(140) << 30), 80);
  EXPECT_THROW(DistinctLayersThatFit(m8, 1, lim, 16, size_t(1) << 30),
               std::runtime_error);
}

std::vector<float> HiddenOf(StepExecutor& exec, const BatchShape& step,
                            cudaStream_t stream) {
  exec.Prepare(step);
  exec.Enqueue();
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<float> out;
  for (kernels::Bf16 b : exec.DownloadHidden()) out.push_back(kernels::Bf16ToFloat(b));
  return out;
}

TEST(StepExecutor, ForwardPassIsFiniteDeterministicAndSeesItsContext) {
  REQUIRE_GPU();
  ModelSpec m = LoadModelSpec("llama-3.1-8b");
  m.num_layers = 2;
  const BatchShape step = MixedStep();
  // Same shapes, longer cached contexts: attention reads more of the cache.
  const BatchShape longer{{{1, 900, true}, {1, 2000, true}, {1, 31, true}, {700, 1500, true}}};
  cudaStream_t stream;
  cublasHandle_t cublas;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cublasCreate(&cublas), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(cublas, stream), CUBLAS_STATUS_SUCCESS);
  {
    StepExecutor exec(m, 1, LimitsOf({step, longer}, 16), 16, 2, stream, cublas);
    const std::vector<float> a = HiddenOf(exec, step, stream);
    ASSERT_EQ(a.size(), size_t(703) * m.hidden_size);
    for (float x : a) ASSERT_TRUE(std::isfinite(x));
    // RMS-normed output of O(1) weights: neither vanished nor blown up.
    double ss = 0;
    for (float x : a) ss += double(x) * x;
    const double rms = std::sqrt(ss / a.size());
    EXPECT_GT(rms, 0.05);
    EXPECT_LT(rms, 20);
    EXPECT_EQ(HiddenOf(exec, step, stream), a);  // bitwise repeatable
    const std::vector<float> b = HiddenOf(exec, longer, stream);
    // Token 0 (the first decode) now attends over 901 keys instead of 101.
    double diff = 0;
    for (int i = 0; i < m.hidden_size; ++i) diff += std::fabs(a[i] - b[i]);
    EXPECT_GT(diff, 0);
  }
  cublasDestroy(cublas);
  cudaStreamDestroy(stream);
}

TEST(TimeSteps, PrefillChunkCostsMoreThanOneDecode) {
  REQUIRE_GPU();
  const ModelSpec m = LoadModelSpec("llama-3.1-8b");
  const BatchShape decode{{{1, 512, true}}};
  const BatchShape prefill{{{2048, 0, true}}};
  int layers = 0;
  const std::vector<StepTiming> t = TimeSteps(m, 1, {decode, prefill}, 2.0, &layers);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(layers, 32);
  for (const StepTiming& s : t) {
    EXPECT_GT(s.median_s, 0);
    EXPECT_LE(s.p10_s, s.median_s);
    EXPECT_GE(s.p90_s, s.median_s);
  }
  // 2048 tokens of GEMM (~33 TFLOP at 8B) against a 16 GB weight read.
  EXPECT_GT(t[1].median_s, 2 * t[0].median_s);
}

}  // namespace
}  // namespace servesim::calibrate::gpu
