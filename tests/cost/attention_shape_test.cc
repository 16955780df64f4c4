// MLA and sliding-window attention (sim/cost/attention_shape.h): the shapes
// of DeepSeek-V3 and gpt-oss-120b worked by hand, the windowed key count,
// and what they do to the roofline's step time and the step work.
#include "sim/cost/attention_shape.h"

#include <gtest/gtest.h>

#include "sim/cost/roofline_cost_model.h"
#include "sim/cost/step_work.h"
#include "sim/model/model_loader.h"

namespace servesim {
namespace {

BatchShape Decodes(int n, int context) {
  BatchShape b;
  b.decode_seqs = n;
  b.decode_context = static_cast<int64_t>(n) * context;
  return b;
}

TEST(AttentionShape, DeepSeekV3MlaByHand) {
  const ModelSpec m = LoadModelSpec("deepseek-v3");
  // Decode at tp 8: 16 query heads over the one 576-value latent, scores
  // on 576 values and the weighted sum on the 512-value compressed part.
  const AttentionShape d = DecodeShape(m, 8, false);
  EXPECT_EQ(d.q_heads, 16);
  EXPECT_EQ(d.kv_heads, 1);
  EXPECT_EQ(d.qk_dim, 576);
  EXPECT_EQ(d.v_dim, 512);
  EXPECT_EQ(d.cache_elems, 576);
  AttentionWork w;
  AddDecodeWork(d, 1, 999, &w);  // one token, 1000 keys
  EXPECT_EQ(w.flops, 2.0 * 16 * (576 + 512) * 1000);
  EXPECT_EQ(w.bytes, 2.0 * 576 * 1000 + 2.0 * 16 * 1088);
  // Prefill: the decompressed heads (192 for scores, 128 for values),
  // each cached token's latent up-projected to 16 heads x (128 + 128).
  const AttentionShape p = PrefillShape(m, 8, false);
  EXPECT_EQ(p.qk_dim, 192);
  EXPECT_EQ(p.v_dim, 128);
  AttentionWork pw;
  AddPrefillWork(p, 100, 400, &pw);
  EXPECT_EQ(pw.flops, 2.0 * 16 * 320 * 100 * (400 + 50.5) + 2.0 * 512 * 16 * 256 * 400);
}

TEST(AttentionShape, WindowedKeysByHand) {
  EXPECT_EQ(AttendedPairs(10, 0, 128), 55);       // inside the window: causal
  EXPECT_EQ(AttendedPairs(10, 0, 0), 55);         // no window
  EXPECT_EQ(AttendedPairs(10, 500, 128), 1280);   // all past it: window each
  // 128 tokens see 1..128 keys, the other 72 see 128.
  EXPECT_EQ(AttendedPairs(200, 0, 128), 128 * 64.5 + 72 * 128);
  // Decode aggregate: at most window + 1 keys a token.
  const ModelSpec g = LoadModelSpec("gpt-oss-120b");
  AttentionWork a, b;
  AddDecodeWork(DecodeShape(g, 1, true), 4, 4 * 5000, &a);
  AddDecodeWork(DecodeShape(g, 1, false), 4, 4 * 128, &b);
  EXPECT_EQ(a.flops, b.flops);
}

// gpt-oss: the windowed layers' attention stops growing past the window,
// so at long contexts decode attention costs about half of what 36
// full-attention layers would; below the window they are the same.
TEST(AttentionShape, WindowedLayersCapDecodeAttention) {
  const ModelSpec g = LoadModelSpec("gpt-oss-120b");
  ModelSpec full = g;
  full.sliding_window_layers = 0;
  const GpuSpec h200 = LoadGpuSpec("h200");
  const RooflineCostModel windowed(g, h200, 1, RooflineParams::Kernels());
  const RooflineCostModel all(full, h200, 1, RooflineParams::Kernels());
  EXPECT_DOUBLE_EQ(windowed.StepTime(Decodes(32, 100)).attn_decode_s,
                   all.StepTime(Decodes(32, 100)).attn_decode_s);
  const double w = windowed.StepTime(Decodes(32, 60000)).attn_decode_s;
  const double f = all.StepTime(Decodes(32, 60000)).attn_decode_s;
  EXPECT_LT(w, 0.52 * f);
  EXPECT_GT(w, 0.48 * f);
  // The step work agrees: windowed layers read 129 keys' KV a token.
  const StepWorkCounter wc(g, 1), fc(full, 1);
  const double kv_token = 2.0 * 8 * 64 * 2;  // one layer's K and V
  EXPECT_EQ(fc.Count(Decodes(1, 60000)).hbm_bytes - wc.Count(Decodes(1, 60000)).hbm_bytes,
            18 * kv_token * (60001 - 129));
}

// FLOPs of one decode token per GPU, by hand from the configs: 2 x the
// active linear parameters (DeepSeek-V3: MLA projections, 3 dense MLPs,
// 58 x (8 routed + 1 shared experts and the router)) / tp, the attention
// over c + 1 keys in every layer, and the LM head.
TEST(AttentionShape, DecodeTokenFlopsByHand) {
  const double attn = 7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 +
                      512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const double linear = 61 * attn + 3 * 3 * 7168.0 * 18432 +
                        58 * (9 * 3 * 7168.0 * 2048 + 7168.0 * 256);
  const double c = 2000;
  const double ds = 2 * linear / 8 + 61 * 2.0 * 16 * (576 + 512) * (c + 1) +
                    2.0 * 7168 * 129280 / 8;
  ModelSpec m = LoadModelSpec("deepseek-v3");
  m.expert_parallel = 8;
  EXPECT_NEAR(StepWorkCounter(m, 8).Count(Decodes(1, 2000)).flops, ds, 1e-9 * ds);
  // gpt-oss-120b at tp 1: 36 x (attention + router + 4 experts), 18 full
  // layers over c + 1 keys and 18 windowed over 129, and the LM head.
  const double g_linear = 36 * (2 * 2880.0 * 4096 + 2 * 2880.0 * 512 + 2880.0 * 128 / 128 * 4 +
                                4 * 3 * 2880.0 * 2880);
  const double g = 2 * g_linear + 2.0 * 64 * 128 * (18 * (c + 1) + 18 * 129) +
                   2.0 * 2880 * 201088;
  EXPECT_NEAR(StepWorkCounter(LoadModelSpec("gpt-oss-120b"), 1).Count(Decodes(1, 2000)).flops, g,
              1e-9 * g);
}

// MLA's cache is the same on every tensor-parallel GPU; its decode
// attention reads one latent per key, not K and V per head.
TEST(AttentionShape, MlaKvIsReplicatedAcrossTp) {
  ModelSpec m = LoadModelSpec("deepseek-v3");
  EXPECT_EQ(m.KvBytesPerTokenPerGpu(1), m.KvBytesPerTokenPerGpu(8));
  m.expert_parallel = 8;
  const RooflineCostModel r(m, LoadGpuSpec("h200"), 8, RooflineParams::Kernels());
  const StepCost c = r.StepTime(Decodes(64, 4000));
  EXPECT_GT(c.attn_decode_s, 0);
  EXPECT_GT(c.gemm_s, c.attn_decode_s);  // weights dominate at this batch
}

}  // namespace
}  // namespace servesim
