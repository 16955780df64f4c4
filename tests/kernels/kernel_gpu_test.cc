// GPU kernels against their CPU references on fresh random bf16 inputs
// (label "gpu"). Outputs are poisoned with bf16 NaN before each run so an
// unwritten element fails. Without a CUDA device the comparisons skip; the
// argument-check tests run everywhere (they return before touching CUDA).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/layer_ops.h"
#include "kernels/reference.h"

namespace servesim::kernels {
namespace {

constexpr double kBf16Tol = 1e-2;  // relative L2 error, bf16 operands/outputs

bool HaveDevice() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define REQUIRE_GPU()                                                  \
  if (!HaveDevice())                                                   \
  GTEST_SKIP() << "no CUDA device present: GPU-vs-CPU comparison skipped"

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<size_t>(n, 1) * sizeof(T)), cudaSuccess);
    Poison();
  }
  explicit DeviceBuffer(const std::vector<T>& v) : DeviceBuffer(v.size()) {
    EXPECT_EQ(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void Poison() { EXPECT_EQ(cudaMemset(p_, 0xff, n_ * sizeof(T)), cudaSuccess); }
  std::vector<T> Download() const {
    std::vector<T> v(n_);
    EXPECT_EQ(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return v;
  }
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
  size_t n_;
};

// Random values already rounded to bf16, so CPU and GPU see the same inputs.
std::vector<float> RandomBf16(size_t n, std::mt19937& rng, float scale = 1.f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = RoundToBf16(u(rng));
  return v;
}

void Sync() {
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Host and device copies of a paged cache for the given total lengths.
struct PagedCase {
  std::vector<float> k, v;
  std::vector<int32_t> table;
  int block_size, max_blocks, kv_heads, d;
  PagedCase(const std::vector<int>& lens, int bs, int kvh, int dim, std::mt19937& rng)
      : block_size(bs), kv_heads(kvh), d(dim) {
    max_blocks = 1;
    for (int n : lens) max_blocks = std::max(max_blocks, (n + bs - 1) / bs);
    int blocks = max_blocks * static_cast<int>(lens.size()) + 3;  // spare blocks
    std::vector<int32_t> perm(blocks);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    table.assign(perm.begin(), perm.begin() + max_blocks * lens.size());
    k = RandomBf16(size_t(blocks) * bs * kvh * dim, rng);
    v = RandomBf16(k.size(), rng);
  }
  PagedKvRef Ref() const {
    return {k.data(), v.data(), table.data(), block_size, max_blocks, kv_heads, d};
  }
};

struct DevicePaged {
  DeviceBuffer<Bf16> k, v;
  DeviceBuffer<int32_t> table;
  explicit DevicePaged(const PagedCase& c) : k(ToBf16(c.k)), v(ToBf16(c.v)), table(c.table) {}
  PagedKvCache View(const PagedCase& c) const {
    return {k.get(), v.get(), table.get(), c.block_size, c.max_blocks, c.kv_heads, c.d};
  }
};

struct DecodeParam { int heads, kv_heads, d, block_size; std::vector<int> lens; };
// Deterministic test names in ctest (the default prints the object's bytes).
void PrintTo(const DecodeParam& p, std::ostream* os) {
  *os << p.lens.size() << " sequences";
}

class DecodeAttentionGpu : public ::testing::TestWithParam<DecodeParam> {};

TEST_P(DecodeAttentionGpu, MatchesFloat64Reference) {
  REQUIRE_GPU();
  const DecodeParam& p = GetParam();
  std::mt19937 rng(1234 + p.heads + p.d);
  PagedCase c(p.lens, p.block_size, p.kv_heads, p.d, rng);
  const int batch = static_cast<int>(p.lens.size());
  const int max_len = *std::max_element(p.lens.begin(), p.lens.end());
  std::vector<float> q = RandomBf16(size_t(batch) * p.heads * p.d, rng);
  const float scale = 1.f / std::sqrt(float(p.d));
  std::vector<int32_t> seq(batch), vis(p.lens.begin(), p.lens.end());
  std::iota(seq.begin(), seq.end(), 0);
  std::vector<double> want;
  NaivePagedAttention64(q.data(), c.Ref(), batch, seq.data(), vis.data(), p.heads,
                        scale, &want);

  DevicePaged dev(c);
  DeviceBuffer<Bf16> dq(ToBf16(q)), dout(q.size());
  DeviceBuffer<int32_t> dlens(vis);
  size_t ws_bytes = DecodeAttentionWorkspaceBytes(batch, p.heads, max_len, p.d);
  DeviceBuffer<char> ws(ws_bytes);
  Status st = LaunchPagedDecodeAttention(dq.get(), dev.View(c), dlens.get(), batch,
                                         p.heads, max_len, scale, ws.get(), ws_bytes,
                                         dout.get(), nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  Sync();
  std::vector<float> got = FromBf16(dout.Download());
  EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), kBf16Tol);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DecodeAttentionGpu,
    ::testing::Values(
        DecodeParam{32, 8, 128, 16, {1, 63, 64, 65, 511, 512, 513, 2000}},
        DecodeParam{14, 2, 64, 32, {5, 1024, 1537}},   // group of 7
        DecodeParam{8, 8, 128, 16, {300, 9}},          // multi-head (g = 1)
        DecodeParam{16, 1, 128, 8, {777}}),            // group of 16
    [](const ::testing::TestParamInfo<DecodeParam>& i) {
      const DecodeParam& p = i.param;
      return "h" + std::to_string(p.heads) + "kv" + std::to_string(p.kv_heads) +
             "d" + std::to_string(p.d) + "bs" + std::to_string(p.block_size);
    });

struct PrefillParam {
  int heads, kv_heads, d, block_size;
  std::vector<int32_t> ctx, chunk;
};

void PrintTo(const PrefillParam& p, std::ostream* os) {
  *os << p.ctx.size() << " sequences";
}

class PrefillAttentionGpu : public ::testing::TestWithParam<PrefillParam> {};

TEST_P(PrefillAttentionGpu, MatchesFloat64Reference) {
  REQUIRE_GPU();
  const PrefillParam& p = GetParam();
  std::mt19937 rng(99 + p.heads + p.d);
  const int batch = static_cast<int>(p.ctx.size());
  std::vector<int> lens;
  std::vector<int32_t> q_start = {0}, seq, vis;
  int max_new = 0, max_total = 0;
  for (int b = 0; b < batch; ++b) {
    lens.push_back(p.ctx[b] + p.chunk[b]);
    q_start.push_back(q_start.back() + p.chunk[b]);
    max_new = std::max(max_new, p.chunk[b]);
    max_total = std::max(max_total, lens.back());
    for (int i = 0; i < p.chunk[b]; ++i) {
      seq.push_back(b);
      vis.push_back(p.ctx[b] + i + 1);
    }
  }
  PagedCase c(lens, p.block_size, p.kv_heads, p.d, rng);
  const int tokens = q_start.back();
  std::vector<float> q = RandomBf16(size_t(tokens) * p.heads * p.d, rng);
  const float scale = 1.f / std::sqrt(float(p.d));
  std::vector<double> want;
  NaivePagedAttention64(q.data(), c.Ref(), tokens, seq.data(), vis.data(), p.heads,
                        scale, &want);

  DevicePaged dev(c);
  DeviceBuffer<Bf16> dq(ToBf16(q)), dout(q.size());
  DeviceBuffer<int32_t> dstart(q_start), dctx(p.ctx);
  Status st = LaunchPrefillAttention(dq.get(), dev.View(c), dstart.get(), dctx.get(),
                                     batch, p.heads, max_new, max_total, scale,
                                     dout.get(), nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  Sync();
  std::vector<float> got = FromBf16(dout.Download());
  EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), kBf16Tol);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PrefillAttentionGpu,
    ::testing::Values(
        PrefillParam{8, 2, 128, 16, {0, 200, 37}, {130, 70, 1}},  // fresh, prefix hit, 1 token
        PrefillParam{14, 2, 64, 32, {0, 64}, {64, 129}},
        PrefillParam{4, 4, 128, 16, {1000}, {300}}),
    [](const ::testing::TestParamInfo<PrefillParam>& i) {
      const PrefillParam& p = i.param;
      return "h" + std::to_string(p.heads) + "kv" + std::to_string(p.kv_heads) +
             "d" + std::to_string(p.d) + "seqs" + std::to_string(p.ctx.size());
    });

TEST(GemmGpu, MatchesEigenReference) {
  REQUIRE_GPU();
  std::mt19937 rng(5);
  const int m = 37, n = 200, k = 264;
  std::vector<float> a = RandomBf16(size_t(m) * k, rng), w = RandomBf16(size_t(n) * k, rng);
  std::vector<float> want(size_t(m) * n);
  GemmRef(a.data(), w.data(), m, n, k, want.data());
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  DeviceBuffer<Bf16> da(ToBf16(a)), dw(ToBf16(w)), dc(want.size());
  Status st = LaunchGemmBf16(handle, da.get(), dw.get(), dc.get(), m, n, k, nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  Sync();
  cublasDestroy(handle);
  std::vector<float> got = FromBf16(dc.Download());
  EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), kBf16Tol);
}

TEST(LayerOpsGpu, AddRmsNormMatchesReference) {
  REQUIRE_GPU();
  std::mt19937 rng(6);
  const int t = 19, h = 4096 + 8;
  std::vector<float> x = RandomBf16(size_t(t) * h, rng), r = RandomBf16(x.size(), rng),
                     w = RandomBf16(h, rng), want(x.size());
  DeviceBuffer<Bf16> dx(ToBf16(x)), dr(ToBf16(r)), dw(ToBf16(w)), dout(x.size());
  AddRmsNormRef(x.data(), r.data(), w.data(), t, h, 1e-5f, want.data());
  Status st = LaunchAddRmsNorm(dx.get(), dr.get(), dw.get(), t, h, 1e-5f, dout.get(), nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  Sync();
  std::vector<float> got = FromBf16(dout.Download()), got_r = FromBf16(dr.Download());
  EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), kBf16Tol);
  EXPECT_LT(RelativeError(got_r.data(), r.data(), r.size()), kBf16Tol);
}

TEST(LayerOpsGpu, SiluMulMatchesReference) {
  REQUIRE_GPU();
  std::mt19937 rng(7);
  const int t = 13, inter = 1400;
  std::vector<float> gu = RandomBf16(size_t(t) * 2 * inter, rng, 4.f), want(size_t(t) * inter);
  SiluMulRef(gu.data(), t, inter, want.data());
  DeviceBuffer<Bf16> dgu(ToBf16(gu)), dout(want.size());
  Status st = LaunchSiluMul(dgu.get(), t, inter, dout.get(), nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  Sync();
  std::vector<float> got = FromBf16(dout.Download());
  EXPECT_LT(RelativeError(got.data(), want.data(), got.size()), kBf16Tol);
}

TEST(LayerOpsGpu, RotaryKvWriteMatchesReference) {
  REQUIRE_GPU();
  std::mt19937 rng(8);
  const int t = 9, heads = 8, kvh = 2, d = 128, bs = 16, blocks = 4;
  const int row = (heads + 2 * kvh) * d;
  std::vector<float> qkv = RandomBf16(size_t(t) * row, rng);
  std::vector<int32_t> pos = {0, 1, 2, 100, 101, 2047, 3000, 4095, 7};
  std::vector<int32_t> slots = {5, 6, 7, 20, 21, 40, 63, 0, -1};  // -1: padding
  std::vector<float> q(size_t(t) * heads * d), k(size_t(t) * kvh * d), v(k.size());
  for (int i = 0; i < t; ++i)
    for (int j = 0; j < heads * d; ++j) q[i * heads * d + j] = qkv[i * row + j];
  for (int i = 0; i < t; ++i)
    for (int j = 0; j < kvh * d; ++j) {
      k[i * kvh * d + j] = qkv[i * row + heads * d + j];
      v[i * kvh * d + j] = qkv[i * row + (heads + kvh) * d + j];
    }
  RotaryRef(q.data(), k.data(), pos.data(), t, heads, kvh, d, 10000.f);
  DeviceBuffer<Bf16> dqkv(ToBf16(qkv)), dq(q.size());
  DeviceBuffer<Bf16> dk(size_t(blocks) * bs * kvh * d), dv(size_t(blocks) * bs * kvh * d);
  DeviceBuffer<int32_t> dpos(pos), dslots(slots);
  Status st = LaunchRotaryKvWrite(dqkv.get(), dpos.get(), dslots.get(), t, heads, kvh, d,
                                  10000.f, dq.get(), dk.get(), dv.get(), nullptr);
  ASSERT_TRUE(st.ok()) << st.message();
  Sync();
  std::vector<float> got_q = FromBf16(dq.Download());
  EXPECT_LT(RelativeError(got_q.data(), q.data(), q.size()), kBf16Tol);
  std::vector<float> ck = FromBf16(dk.Download()), cv = FromBf16(dv.Download());
  std::vector<float> gk, gv, wk, wv;
  for (int i = 0; i < t; ++i) {
    if (slots[i] < 0) continue;
    for (int j = 0; j < kvh * d; ++j) {
      gk.push_back(ck[size_t(slots[i]) * kvh * d + j]);
      gv.push_back(cv[size_t(slots[i]) * kvh * d + j]);
      wk.push_back(k[i * kvh * d + j]);
      wv.push_back(v[i * kvh * d + j]);
    }
  }
  EXPECT_LT(RelativeError(gk.data(), wk.data(), gk.size()), kBf16Tol);
  EXPECT_EQ(RelativeError(gv.data(), wv.data(), gv.size()), 0.0);  // plain copy
}

// Argument checks: these return before any CUDA call, so they run anywhere.
TEST(LauncherArgs, AttentionRejectsBadShapes) {
  Bf16 dummy = 0;
  int32_t idx = 0;
  PagedKvCache kv{&dummy, &dummy, &idx, 16, 4, 8, 128};
  char ws[8];
  auto decode = [&](const PagedKvCache& c, int heads, int max_len, size_t wsb) {
    return LaunchPagedDecodeAttention(&dummy, c, &idx, 2, heads, max_len, 0.1f, ws,
                                      wsb, &dummy, nullptr);
  };
  size_t big = size_t(1) << 40;
  EXPECT_FALSE(decode(kv, 30, 64, big).ok());   // 30 heads over 8 KV heads
  EXPECT_FALSE(decode(kv, 32, 65, big).ok());   // 4 blocks x 16 < 65 tokens
  EXPECT_FALSE(decode(kv, 32, 64, 8).ok());     // workspace too small
  PagedKvCache bad_dim = kv;
  bad_dim.head_dim = 96;
  EXPECT_FALSE(decode(bad_dim, 32, 64, big).ok());
  PagedKvCache no_table = kv;
  no_table.block_table = nullptr;
  EXPECT_FALSE(decode(no_table, 32, 64, big).ok());
  EXPECT_FALSE(LaunchPrefillAttention(&dummy, kv, &idx, &idx, 1, 32, 80, 64, 0.1f,
                                      &dummy, nullptr).ok());  // max_new > max_total
  EXPECT_FALSE(LaunchPrefillAttention(nullptr, kv, &idx, &idx, 1, 32, 8, 64, 0.1f,
                                      &dummy, nullptr).ok());
}

TEST(LauncherArgs, LayerOpsRejectBadShapes) {
  Bf16 dummy = 0;
  int32_t idx = 0;
  EXPECT_FALSE(LaunchAddRmsNorm(&dummy, nullptr, &dummy, 4, 100, 1e-5f, &dummy, nullptr).ok());
  EXPECT_FALSE(LaunchSiluMul(nullptr, 4, 64, &dummy, nullptr).ok());
  EXPECT_FALSE(LaunchRotaryKvWrite(&dummy, &idx, &idx, 1, 6, 4, 128, 1e4f, &dummy, &dummy,
                                   &dummy, nullptr).ok());  // 6 % 4 != 0
  EXPECT_FALSE(LaunchGemmBf16(nullptr, &dummy, &dummy, &dummy, 1, 1, 1, nullptr).ok());
}

}  // namespace
}  // namespace servesim::kernels
