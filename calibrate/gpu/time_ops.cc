// TimeOps: each grid point's operation at the model's tensor-parallel shard,
// on random bf16 inputs, through kernels/ and cuBLAS. Every point gets its
// share of the remaining budget. Inputs rotate among enough copies that the
// copies together exceed twice the L2, so repeated runs read HBM, not cache.
// Shapes (H = heads/tp, KVH = KV heads per GPU, D = head_dim, I = inter/tp):
//   QKV [M x hidden] x [(H + 2 KVH) D], O [M x H D] x [hidden],
//   gate+up [M x hidden] x [2I], down [M x I] x [hidden], LM head x [vocab/tp];
//   decode: batch sequences of `context` cached tokens, block size 16;
//   prefill: one sequence, `tokens` new after `context` cached;
//   elementwise: 2 x (residual + RMSNorm), rotary + KV write, SiLU-mul.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include "calibrate/gpu/cuda_check.h"
#include "calibrate/gpu/device_arena.h"
#include "calibrate/gpu/op_timer.h"
#include "calibrate/gpu_harness_api.h"
#include "kernels/attention.h"
#include "kernels/layer_ops.h"

namespace servesim::calibrate {
namespace {

using kernels::Bf16;
constexpr int kBlockSize = 16;

using gpu::Arena;
using gpu::Shard;

struct Env {
  cudaStream_t stream;
  cublasHandle_t cublas;
  size_t l2_bytes;
  size_t free_bytes;
};

// How many input copies to rotate among for a set of `bytes`.
int Copies(const Env& env, double bytes) {
  int n = static_cast<int>(std::ceil(2.0 * env.l2_bytes / std::max(bytes, 1.0)));
  n = std::clamp(n, 1, 16);
  while (n > 1 && n * bytes > 0.5 * env.free_bytes) --n;
  return n;
}

using Launch = std::function<void(int)>;

Launch PrepareGemm(OpKind kind, const Shard& s, int64_t m, Arena& a, const Env& env) {
  int n = 0, k = 0;
  switch (kind) {
    case OpKind::kGemmQkv: n = (s.heads + 2 * s.kv_heads) * s.head_dim; k = s.hidden; break;
    case OpKind::kGemmO: n = s.hidden; k = s.heads * s.head_dim; break;
    case OpKind::kGemmGateUp: n = 2 * s.inter; k = s.hidden; break;
    case OpKind::kGemmDown: n = s.hidden; k = s.inter; break;
    default: n = s.vocab; k = s.hidden; break;
  }
  const int copies = Copies(env, 2.0 * (double(n) * k + double(m) * (k + n)));
  std::vector<Bf16*> as, ws, cs;
  for (int i = 0; i < copies; ++i) {
    as.push_back(a.Random(size_t(m) * k, env.stream));
    ws.push_back(a.Random(size_t(n) * k, env.stream, 0.05f));
    cs.push_back(a.Alloc<Bf16>(size_t(m) * n));
  }
  return [=](int i) {
    const int c = i % copies;
    gpu::Check(kernels::LaunchGemmBf16(env.cublas, as[c], ws[c], cs[c], int(m), n, k,
                                       env.stream), "gemm");
  };
}

struct PagedSet {
  kernels::PagedKvCache kv;
  const int32_t* lens;
};

// A cache of `batch` sequences of `len` tokens each, blocks interleaved
// across sequences (as a busy pool hands them out).
PagedSet MakePaged(const Shard& s, int batch, int len, Arena& a, const Env& env) {
  const int mb = (len + kBlockSize - 1) / kBlockSize;
  std::vector<int32_t> table(size_t(batch) * mb);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < mb; ++i) table[size_t(b) * mb + i] = i * batch + b;
  const size_t elems = size_t(batch) * mb * kBlockSize * s.kv_heads * s.head_dim;
  PagedSet p;
  p.kv = {a.Random(elems, env.stream), a.Random(elems, env.stream), a.Upload(table),
          kBlockSize, mb, s.kv_heads, s.head_dim};
  p.lens = a.Upload(std::vector<int32_t>(batch, len));
  return p;
}

Launch PrepareDecode(const Shard& s, int batch, int ctx, Arena& a, const Env& env) {
  const double set_bytes = 4.0 * batch * double(ctx) * s.kv_heads * s.head_dim;
  const int copies = Copies(env, set_bytes);
  std::vector<PagedSet> sets;
  std::vector<Bf16*> qs, outs;
  const size_t ws_bytes = kernels::DecodeAttentionWorkspaceBytes(batch, s.heads, ctx, s.head_dim);
  void* ws = a.Alloc<char>(ws_bytes);
  for (int i = 0; i < copies; ++i) {
    sets.push_back(MakePaged(s, batch, ctx, a, env));
    qs.push_back(a.Random(size_t(batch) * s.heads * s.head_dim, env.stream));
    outs.push_back(a.Alloc<Bf16>(size_t(batch) * s.heads * s.head_dim));
  }
  const float scale = 1.f / std::sqrt(float(s.head_dim));
  return [=](int i) {
    const int c = i % copies;
    gpu::Check(kernels::LaunchPagedDecodeAttention(qs[c], sets[c].kv, sets[c].lens, batch,
                                                   s.heads, ctx, scale, ws, ws_bytes,
                                                   outs[c], env.stream), "decode attention");
  };
}

Launch PreparePrefill(const Shard& s, int tokens, int ctx, Arena& a, const Env& env) {
  const int total = tokens + ctx;
  const double set_bytes = 4.0 * total * s.kv_heads * s.head_dim + 4.0 * tokens * s.heads * s.head_dim;
  const int copies = Copies(env, set_bytes);
  std::vector<PagedSet> sets;
  std::vector<Bf16*> qs, outs;
  int32_t* q_start = a.Upload({0, tokens});
  int32_t* ctx_lens = a.Upload({ctx});
  for (int i = 0; i < copies; ++i) {
    sets.push_back(MakePaged(s, 1, total, a, env));
    qs.push_back(a.Random(size_t(tokens) * s.heads * s.head_dim, env.stream));
    outs.push_back(a.Alloc<Bf16>(size_t(tokens) * s.heads * s.head_dim));
  }
  const float scale = 1.f / std::sqrt(float(s.head_dim));
  return [=](int i) {
    const int c = i % copies;
    gpu::Check(kernels::LaunchPrefillAttention(qs[c], sets[c].kv, q_start, ctx_lens, 1,
                                               s.heads, tokens, total, scale, outs[c],
                                               env.stream), "prefill attention");
  };
}

Launch PrepareElementwise(const Shard& s, int m, Arena& a, const Env& env) {
  const int qkv_w = (s.heads + 2 * s.kv_heads) * s.head_dim;
  const double set_bytes = 2.0 * m * (4.0 * s.hidden + 2.0 * qkv_w + 3.0 * s.inter);
  const int copies = Copies(env, set_bytes);
  struct Set { Bf16 *x, *res, *y, *qkv, *q, *kc, *vc, *gu, *act; };
  std::vector<Set> sets;
  std::vector<int32_t> pos(m), slots(m);
  std::iota(pos.begin(), pos.end(), 0);
  std::iota(slots.begin(), slots.end(), 0);
  int32_t* dpos = a.Upload(pos);
  int32_t* dslots = a.Upload(slots);
  Bf16* w = a.Random(s.hidden, env.stream);
  const size_t kv_elems = size_t(m) * s.kv_heads * s.head_dim;
  for (int i = 0; i < copies; ++i) {
    sets.push_back({a.Random(size_t(m) * s.hidden, env.stream),
                    a.Random(size_t(m) * s.hidden, env.stream), a.Alloc<Bf16>(size_t(m) * s.hidden),
                    a.Random(size_t(m) * qkv_w, env.stream),
                    a.Alloc<Bf16>(size_t(m) * s.heads * s.head_dim), a.Alloc<Bf16>(kv_elems),
                    a.Alloc<Bf16>(kv_elems), a.Random(size_t(m) * 2 * s.inter, env.stream),
                    a.Alloc<Bf16>(size_t(m) * s.inter)});
  }
  return [=](int i) {
    const Set& t = sets[i % copies];
    cudaStream_t st = env.stream;
    gpu::Check(kernels::LaunchAddRmsNorm(t.x, t.res, w, m, s.hidden, 1e-5f, t.y, st), "norm");
    gpu::Check(kernels::LaunchRotaryKvWrite(t.qkv, dpos, dslots, m, s.heads, s.kv_heads,
                                            s.head_dim, 5e5f, t.q, t.kc, t.vc, st), "rotary");
    gpu::Check(kernels::LaunchAddRmsNorm(t.x, t.res, w, m, s.hidden, 1e-5f, t.y, st), "norm");
    gpu::Check(kernels::LaunchSiluMul(t.gu, m, s.inter, t.act, st), "silu");
  };
}

Launch Prepare(const OpPoint& p, const Shard& s, Arena& a, const Env& env) {
  switch (p.kind) {
    case OpKind::kDecodeAttention:
      return PrepareDecode(s, int(p.batch), int(p.context), a, env);
    case OpKind::kPrefillAttention:
      return PreparePrefill(s, int(p.tokens), int(p.context), a, env);
    case OpKind::kElementwise:
      return PrepareElementwise(s, int(p.tokens), a, env);
    default:
      return PrepareGemm(p.kind, s, p.tokens, a, env);
  }
}

}  // namespace

std::vector<OpTiming> TimeOps(const ModelSpec& model, int tp,
                              const std::vector<OpPoint>& points, double budget_s) {
  if (tp <= 0 || model.num_heads % tp != 0)
    throw std::runtime_error("TimeOps: heads must divide evenly over tp");
  const Shard shard(model, tp);
  cudaDeviceProp prop{};
  SERVESIM_CUDA(cudaGetDeviceProperties(&prop, 0));
  Env env{};
  env.l2_bytes = prop.l2CacheSize;
  SERVESIM_CUDA(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking));
  SERVESIM_CUDA(cublasCreate(&env.cublas));
  // A fixed cuBLAS workspace keeps its kernels capturable in CUDA graphs.
  const size_t cublas_ws = size_t(64) << 20;
  void* ws = nullptr;
  SERVESIM_CUDA(cudaMalloc(&ws, cublas_ws));
  SERVESIM_CUDA(cublasSetWorkspace(env.cublas, ws, cublas_ws));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<OpTiming> out;
  for (size_t i = 0; i < points.size(); ++i) {
    const double used =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double share = std::max(0.02, (budget_s - used) / double(points.size() - i));
    size_t total = 0;
    SERVESIM_CUDA(cudaMemGetInfo(&env.free_bytes, &total));
    Arena arena;
    Launch launch = Prepare(points[i], shard, arena, env);
    SERVESIM_CUDA(cudaStreamSynchronize(env.stream));
    gpu::TimingStats st = gpu::TimeOnStream(launch, env.stream, share);
    out.push_back({points[i], st.median_s, st.p10_s, st.p90_s, st.repetitions});
  }
  cublasDestroy(env.cublas);
  cudaFree(ws);
  cudaStreamDestroy(env.stream);
  return out;
}

}  // namespace servesim::calibrate
