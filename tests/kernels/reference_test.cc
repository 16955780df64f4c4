// Self-tests of the CPU references in kernels/: the tiled online-softmax
// attention references against the naive float64 formula, and the layer
// ops against their definitions. Label "unit": they run everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/reference.h"

namespace servesim::kernels {
namespace {

std::vector<float> Random(size_t n, std::mt19937& rng, float scale = 1.f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// A paged cache for the given sequence lengths with shuffled physical blocks.
struct PagedFixture {
  std::vector<float> k, v;
  std::vector<int32_t> table;
  PagedKvRef ref;
  PagedFixture(const std::vector<int>& lens, int block_size, int kv_heads,
               int head_dim, std::mt19937& rng) {
    int max_blocks = 1, total_blocks = 0;
    for (int n : lens) max_blocks = std::max(max_blocks, (n + block_size - 1) / block_size);
    total_blocks = max_blocks * static_cast<int>(lens.size());
    std::vector<int32_t> perm(total_blocks);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    table = perm;
    size_t elems = size_t(total_blocks) * block_size * kv_heads * head_dim;
    k = Random(elems, rng);
    v = Random(elems, rng);
    ref = {k.data(), v.data(), table.data(), block_size, max_blocks, kv_heads, head_dim};
  }
};

TEST(AttentionReference, DecodeMatchesNaiveFloat64) {
  std::mt19937 rng(7);
  const std::vector<int> lens = {1, 17, 600, 1500};  // crosses partitions
  const int heads = 8, kv_heads = 2, d = 64;
  PagedFixture f(lens, 16, kv_heads, d, rng);
  const int batch = static_cast<int>(lens.size());
  std::vector<float> q = Random(size_t(batch) * heads * d, rng);
  std::vector<float> out(q.size(), NAN);
  const float scale = 1.f / std::sqrt(float(d));
  PagedDecodeAttentionRef(q.data(), f.ref, lens.data(), batch, heads, scale, 512,
                          out.data());
  std::vector<int32_t> seq(batch), vis(lens.begin(), lens.end());
  std::iota(seq.begin(), seq.end(), 0);
  std::vector<double> want;
  NaivePagedAttention64(q.data(), f.ref, batch, seq.data(), vis.data(), heads,
                        scale, &want);
  EXPECT_LT(RelativeError(out.data(), want.data(), out.size()), 1e-5);
}

TEST(AttentionReference, PrefillMatchesNaiveFloat64) {
  std::mt19937 rng(8);
  // Sequence 0: fresh prompt of 70; 1: 100 cached (prefix hit) + chunk of 33.
  const std::vector<int32_t> ctx = {0, 100}, q_start = {0, 70, 103};
  const std::vector<int> lens = {70, 133};
  const int heads = 4, kv_heads = 4, d = 32;
  PagedFixture f(lens, 16, kv_heads, d, rng);
  std::vector<float> q = Random(size_t(103) * heads * d, rng);
  std::vector<float> out(q.size(), NAN);
  const float scale = 1.f / std::sqrt(float(d));
  PrefillAttentionRef(q.data(), f.ref, q_start.data(), ctx.data(), 2, heads, scale,
                      64, out.data());
  std::vector<int32_t> seq, vis;
  for (int b = 0; b < 2; ++b)
    for (int r = q_start[b]; r < q_start[b + 1]; ++r) {
      seq.push_back(b);
      vis.push_back(ctx[b] + r - q_start[b] + 1);
    }
  std::vector<double> want;
  NaivePagedAttention64(q.data(), f.ref, 103, seq.data(), vis.data(), heads, scale,
                        &want);
  EXPECT_LT(RelativeError(out.data(), want.data(), out.size()), 1e-5);
}

TEST(AttentionReference, SingleKeyReturnsItsValue) {
  std::mt19937 rng(9);
  PagedFixture f({1}, 16, 1, 16, rng);
  std::vector<float> q = Random(16, rng), out(16);
  const int32_t len = 1;
  PagedDecodeAttentionRef(q.data(), f.ref, &len, 1, 1, 0.25f, 512, out.data());
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(out[i], f.ref.ValueRow(0, 0, 0)[i]);
}

TEST(LayerReference, RmsNormMatchesDefinition) {
  std::mt19937 rng(10);
  const int t = 3, h = 40;
  std::vector<float> x = Random(t * h, rng), r = Random(t * h, rng),
                     w = Random(h, rng), out(t * h);
  std::vector<float> r0 = r;
  AddRmsNormRef(x.data(), r.data(), w.data(), t, h, 1e-6f, out.data());
  for (int i = 0; i < t; ++i) {
    double ss = 0;
    for (int j = 0; j < h; ++j) ss += double(x[i * h + j] + r0[i * h + j]) * (x[i * h + j] + r0[i * h + j]);
    double inv = 1 / std::sqrt(ss / h + 1e-6);
    for (int j = 0; j < h; ++j) {
      double hv = double(x[i * h + j]) + r0[i * h + j];
      EXPECT_NEAR(r[i * h + j], hv, 1e-6);
      EXPECT_NEAR(out[i * h + j], hv * inv * w[j], 1e-5);
    }
  }
}

TEST(LayerReference, RotaryIsARotation) {
  std::mt19937 rng(11);
  const int d = 16;
  std::vector<float> q = Random(2 * d, rng);
  std::vector<float> q0 = q;
  const int32_t pos[2] = {0, 37};
  std::vector<float> k2 = Random(2 * d, rng);
  RotaryRef(q.data(), k2.data(), pos, 2, 1, 1, d, 10000.f);
  for (int i = 0; i < d; ++i) EXPECT_FLOAT_EQ(q[i], q0[i]);  // position 0
  double n0 = 0, n1 = 0;
  for (int i = 0; i < d; ++i) {
    n0 += double(q0[d + i]) * q0[d + i];
    n1 += double(q[d + i]) * q[d + i];
  }
  EXPECT_NEAR(n0, n1, 1e-5);
  // Pair 0 rotates by exactly pos radians (theta^0 = 1).
  double want = q0[d] * std::cos(37.0) - q0[d + d / 2] * std::sin(37.0);
  EXPECT_NEAR(q[d], want, 1e-5);
}

TEST(LayerReference, SiluMulAndGemm) {
  std::mt19937 rng(12);
  std::vector<float> gu = Random(2 * 8, rng), out(8);
  SiluMulRef(gu.data(), 1, 8, out.data());
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(out[i], gu[i] / (1 + std::exp(-double(gu[i]))) * gu[8 + i], 1e-6);
  const int m = 5, n = 7, k = 9;
  std::vector<float> a = Random(m * k, rng), w = Random(n * k, rng), c(m * n);
  GemmRef(a.data(), w.data(), m, n, k, c.data());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int l = 0; l < k; ++l) s += double(a[i * k + l]) * w[j * k + l];
      EXPECT_NEAR(c[i * n + j], s, 1e-5);
    }
}

}  // namespace
}  // namespace servesim::kernels
