// Per-op features (see op_features.h). Shapes are per GPU under tensor
// parallelism, exactly as in the roofline model, so a profile fitted at tp=N
// describes one shard and the roofline's FLOP and byte counts can be used
// to project it to another GPU.
//
// Why these features: a kernel's time is well described by a launch
// constant plus its compute term or its memory term (the roofline), so the
// fitted coefficients read as "seconds per FLOP" and "seconds per byte".
// Decode attention is the exception: its FLOPs and KV bytes both grow as
// batch x context, so the two columns are nearly collinear and their
// coefficients would be meaningless; its other cost driver is per-sequence
// work (block-table walk, loading q, the split-K reduction), hence
// [sequences, KV bytes].
#include "sim/cost/op_features.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace servesim {
namespace {

constexpr const char* kNames[kNumProfileOps] = {
    "gemm_qkv",     "gemm_o",           "gemm_gate_up",      "gemm_down",
    "gemm_lm_head", "decode_attention", "prefill_attention", "elementwise"};

GemmDims DimsOf(ProfileOp op, const ModelSpec& m, int tp) {
  const double h = m.hidden_size, d = m.head_dim;
  const double q = static_cast<double>(m.num_heads) / tp;
  const double kv = m.KvHeadsPerGpu(tp);
  const double inter = static_cast<double>(m.intermediate_size) / tp;
  switch (op) {
    case ProfileOp::kGemmQkv:
      return {h, (q + 2 * kv) * d};
    case ProfileOp::kGemmO:
      return {q * d, h};
    case ProfileOp::kGemmGateUp:
      return {h, 2 * inter};
    case ProfileOp::kGemmDown:
      return {inter, h};
    case ProfileOp::kGemmLmHead:
      return {h, static_cast<double>(m.vocab_size) / tp};
    default:
      break;
  }
  std::fprintf(stderr, "DimsOf: %s is not a GEMM\n", ProfileOpName(op));
  std::abort();
}

}  // namespace

const char* ProfileOpName(ProfileOp op) {
  const int i = static_cast<int>(op);
  return (i >= 0 && i < kNumProfileOps) ? kNames[i] : "unknown";
}

bool ProfileOpFromName(const std::string& name, ProfileOp* op) {
  for (int i = 0; i < kNumProfileOps; ++i) {
    if (name == kNames[i]) {
      *op = static_cast<ProfileOp>(i);
      return true;
    }
  }
  return false;
}

GemmDims GemmDimsOf(ProfileOp op, const ModelSpec& model, int tp) {
  return DimsOf(op, model, tp);
}

bool IsGemm(ProfileOp op) {
  return static_cast<int>(op) <= static_cast<int>(ProfileOp::kGemmLmHead);
}

OpFeatures FeaturesOf(ProfileOp op, const OpShape& s, const ModelSpec& m,
                      int tp) {
  const double b = m.dtype_bytes, d = m.head_dim;
  const double q = static_cast<double>(m.num_heads) / tp;
  const double kv = m.KvHeadsPerGpu(tp);
  OpFeatures f;
  if (IsGemm(op)) {
    const GemmDims g = DimsOf(op, m, tp);
    const double t = static_cast<double>(s.tokens);
    f.flops = 2 * t * g.k * g.n;
    // Weights in their dtype (the LM head stays bf16 under fp8), input and
    // output in bf16.
    const double w = op == ProfileOp::kGemmLmHead ? b : m.weight_bytes;
    f.bytes = w * (g.k * g.n) + b * (t * g.k + t * g.n);  // weights + in + out
    f.x = {f.flops, f.bytes};
    f.count = 2;
    f.size = f.flops;
    f.grid_inner = t;
    return f;
  }
  switch (op) {
    case ProfileOp::kDecodeAttention: {
      // One new token per sequence attends to context + 1 keys.
      const double n = static_cast<double>(s.batch);
      const double keys = static_cast<double>(s.context) + 1;
      const double kv_bytes = n * m.kv_bytes * 2 * kv * d * keys;
      f.flops = n * 4 * q * d * keys;
      f.bytes = kv_bytes + n * b * 2 * q * d;  // + q in, out
      f.x = {n, kv_bytes};
      f.count = 2;
      f.size = f.bytes;
      f.grid_outer = n;
      f.grid_inner = static_cast<double>(s.context);
      return f;
    }
    case ProfileOp::kPrefillAttention: {
      // Causal: new token j (1..n) attends to context + j keys.
      const double n = static_cast<double>(s.tokens);
      const double c = static_cast<double>(s.context);
      const double kv_bytes = m.kv_bytes * 2 * kv * d * (c + n);
      f.flops = 4 * q * d * n * (c + (n + 1) / 2);
      f.bytes = kv_bytes + b * 2 * q * d * n;
      f.x = {f.flops, kv_bytes};
      f.count = 2;
      f.size = f.flops;
      f.grid_inner = std::sqrt(n * n + 2 * n * c);
      return f;
    }
    case ProfileOp::kElementwise: {
      // One layer's RMSNorms, residual adds, rotary on q and k, SiLU-mul;
      // the same byte count as the roofline model's per-layer term.
      const double h = m.hidden_size, t = static_cast<double>(s.tokens);
      const double inter = static_cast<double>(m.intermediate_size) / tp;
      const double per_token = 2 * (2 * h) + 2 * (3 * h) + 2 * (q + kv) * d +
                               3 * inter * m.experts_per_token;
      f.bytes = b * t * per_token;
      f.x = {f.bytes, 0};
      f.count = 1;
      f.size = f.bytes;
      f.grid_inner = t;
      return f;
    }
    default:
      break;
  }
  std::fprintf(stderr, "FeaturesOf: bad op %d\n", static_cast<int>(op));
  std::abort();
}

std::vector<std::string> FeatureNames(ProfileOp op) {
  if (IsGemm(op)) return {"flops", "bytes"};
  if (op == ProfileOp::kDecodeAttention) return {"sequences", "kv_bytes"};
  if (op == ProfileOp::kPrefillAttention) return {"flops", "kv_bytes"};
  return {"bytes"};
}

}  // namespace servesim
