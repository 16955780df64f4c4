// The executed-step harness behind `servesim-calibrate validate` (label
// "gpu"). Buffer sizing is host arithmetic and runs everywhere; executing
// and timing steps needs a CUDA device and skips without one.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "calibrate/gpu/step_executor.h"
#include "calibrate/gpu_harness_api.h"
#include "kernels/bf16_host.h"
#include "kernels/reference.h"
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

std::vector<float> Download(const kernels::Bf16* p, size_t n) {
  std::vector<kernels::Bf16> b(n);
  EXPECT_EQ(cudaMemcpy(b.data(), p, n * sizeof(kernels::Bf16), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return kernels::FromBf16(b);
}

// Rounds every element to bf16, as the GPU stores each intermediate.
void Round(std::vector<float>* v) {
  for (float& x : *v) x = kernels::RoundToBf16(x);
}

// The whole forward pass of the prepared step recomputed on the CPU from
// the executor's own weights, inputs and pre-existing cache contents, with
// the kernels' CPU references and a float64 attention: checks the
// composition (token order, positions, slots, block tables, residual
// stream), which the per-kernel tests cannot.
TEST(StepExecutor, ForwardPassMatchesCpuRecomputation) {
  REQUIRE_GPU();
  ModelSpec m = LoadModelSpec("llama-3.1-8b");
  m.num_layers = 2;
  m.hidden_size = 256;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 64;
  m.intermediate_size = 512;
  m.vocab_size = 1024;
  constexpr int kBs = 16;
  // Decodes at contexts 40 and 5, a 37-token chunk after 21 cached tokens
  // (starts mid-block), a fresh 9-token prompt.
  const BatchShape step{{{1, 40, true}, {37, 21, false}, {1, 5, true}, {9, 0, true}}};
  cudaStream_t stream;
  cublasHandle_t cublas;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cublasCreate(&cublas), CUBLAS_STATUS_SUCCESS);
  {
    const StepLimits lim = LimitsOf({step}, kBs);
    StepExecutor exec(m, 1, lim, kBs, m.num_layers, stream, cublas);
    exec.Prepare(step);
    const int t = exec.tokens(), h = m.hidden_size, hd = m.num_heads * m.head_dim,
              kvh = m.num_kv_heads, d = m.head_dim, inter = m.intermediate_size;
    const int qkvw = (m.num_heads + 2 * kvh) * d;
    ASSERT_EQ(t, 1 + 37 + 1 + 9);
    std::vector<float> x = Download(exec.input(), size_t(t) * h);
    const size_t kv_elems = size_t(lim.max_kv_blocks) * kBs * kvh * d;
    // Cache contents before the step (the context tokens' keys and values).
    std::vector<std::vector<float>> kc, vc;
    for (int l = 0; l < m.num_layers; ++l) {
      kc.push_back(Download(exec.layer_kv(l).k, kv_elems));
      vc.push_back(Download(exec.layer_kv(l).v, kv_elems));
    }
    exec.Enqueue();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const std::vector<float> gpu = kernels::FromBf16(exec.DownloadHidden());

    // Execution order: decodes first (ASSERTed), then prefills.
    const auto& order = exec.order();
    const auto& blocks = exec.seq_blocks();
    ASSERT_EQ(order.size(), 4u);
    EXPECT_TRUE(IsDecode(order[0]) && IsDecode(order[1]));
    EXPECT_FALSE(IsDecode(order[2]) || IsDecode(order[3]));
    int max_blocks = 0;
    for (const auto& b : blocks) max_blocks = std::max<int>(max_blocks, b.size());
    std::vector<int32_t> table(order.size() * max_blocks, 0);
    std::vector<int32_t> positions, slots, query_seq, query_visible;
    for (size_t b = 0; b < order.size(); ++b) {
      ASSERT_EQ(int(blocks[b].size()),
                (order[b].context_tokens + order[b].new_tokens + kBs - 1) / kBs);
      std::copy(blocks[b].begin(), blocks[b].end(), table.begin() + b * max_blocks);
      for (int i = 0; i < order[b].new_tokens; ++i) {
        const int p = order[b].context_tokens + i;
        positions.push_back(p);
        slots.push_back(blocks[b][p / kBs] * kBs + p % kBs);
        query_seq.push_back(int(b));
        query_visible.push_back(p + 1);  // causal: itself and all before it
      }
    }
    std::vector<float> residual(size_t(t) * h, 0.f), normed(size_t(t) * h);
    for (int l = 0; l < m.num_layers; ++l) {
      const StepExecutor::LayerWeights& w = exec.layer_weights(l);
      const auto wqkv = Download(w.qkv, size_t(qkvw) * h), wo = Download(w.o, size_t(h) * hd),
                 wgu = Download(w.gate_up, size_t(2) * inter * h),
                 wdown = Download(w.down, size_t(h) * inter), n1 = Download(w.norm1, h),
                 n2 = Download(w.norm2, h);
      kernels::AddRmsNormRef(x.data(), residual.data(), n1.data(), t, h, kStepNormEps,
                             normed.data());
      Round(&residual);
      Round(&normed);
      std::vector<float> qkv(size_t(t) * qkvw);
      kernels::GemmRef(normed.data(), wqkv.data(), t, qkvw, h, qkv.data());
      Round(&qkv);
      std::vector<float> q(size_t(t) * hd), k(size_t(t) * kvh * d), v(size_t(t) * kvh * d);
      for (int r = 0; r < t; ++r) {
        const float* row = qkv.data() + size_t(r) * qkvw;
        std::copy(row, row + hd, q.begin() + size_t(r) * hd);
        std::copy(row + hd, row + hd + kvh * d, k.begin() + size_t(r) * kvh * d);
        std::copy(row + hd + kvh * d, row + qkvw, v.begin() + size_t(r) * kvh * d);
      }
      kernels::RotaryRef(q.data(), k.data(), positions.data(), t, m.num_heads, kvh, d,
                         kStepRopeTheta);
      Round(&q);
      Round(&k);
      for (int r = 0; r < t; ++r) {
        std::copy(k.begin() + size_t(r) * kvh * d, k.begin() + size_t(r + 1) * kvh * d,
                  kc[l].begin() + size_t(slots[r]) * kvh * d);
        std::copy(v.begin() + size_t(r) * kvh * d, v.begin() + size_t(r + 1) * kvh * d,
                  vc[l].begin() + size_t(slots[r]) * kvh * d);
      }
      const kernels::PagedKvRef kv{kc[l].data(), vc[l].data(), table.data(), kBs,
                                   max_blocks, kvh, d};
      std::vector<double> attn64;
      kernels::NaivePagedAttention64(q.data(), kv, t, query_seq.data(), query_visible.data(),
                                     m.num_heads, 1.0 / std::sqrt(double(d)), &attn64);
      std::vector<float> attn(attn64.begin(), attn64.end());
      Round(&attn);
      kernels::GemmRef(attn.data(), wo.data(), t, h, hd, x.data());
      Round(&x);
      kernels::AddRmsNormRef(x.data(), residual.data(), n2.data(), t, h, kStepNormEps,
                             normed.data());
      Round(&residual);
      Round(&normed);
      std::vector<float> gu(size_t(t) * 2 * inter), act(size_t(t) * inter);
      kernels::GemmRef(normed.data(), wgu.data(), t, 2 * inter, h, gu.data());
      Round(&gu);
      kernels::SiluMulRef(gu.data(), t, inter, act.data());
      Round(&act);
      kernels::GemmRef(act.data(), wdown.data(), t, h, inter, x.data());
      Round(&x);
    }
    const auto fn = Download(exec.final_norm(), h);
    kernels::AddRmsNormRef(x.data(), residual.data(), fn.data(), t, h, kStepNormEps,
                           normed.data());
    // Two layers of ~15 bf16-rounded intermediates each, whose accumulation
    // orders differ: about 1% relative error. A composition bug (a token in
    // the wrong slot, a wrong position or visible length) costs far more.
    EXPECT_LT(kernels::RelativeError(gpu.data(), normed.data(), normed.size()), 3e-2);
    // Each sequence's rows separately, so a misplaced sequence cannot hide
    // in the average.
    int row = 0;
    for (size_t b = 0; b < order.size(); ++b) {
      const size_t off = size_t(row) * h, n = size_t(order[b].new_tokens) * h;
      EXPECT_LT(kernels::RelativeError(gpu.data() + off, normed.data() + off, n), 5e-2)
          << "sequence " << b;
      row += order[b].new_tokens;
    }
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
