// The operations a calibrated profile prices, and the interpretable
// features of one operation at one shape (FLOPs, bytes moved, sequences).
//
// Both sides use these: calibrate/ fits per-op models over the features of
// timed grid points, and the calibrated cost model evaluates the same
// features for the shapes of a simulated step, so fit and prediction can
// never disagree about what a feature means. The order of ProfileOp matches
// calibrate::OpKind (calibrate/op_timing.h); a test checks the names agree.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/model/model_spec.h"

namespace servesim {

enum class ProfileOp {
  kGemmQkv,
  kGemmO,
  kGemmGateUp,
  kGemmDown,
  kGemmLmHead,
  kDecodeAttention,
  kPrefillAttention,
  kElementwise,
};
inline constexpr int kNumProfileOps = 8;

// "gemm_qkv", "gemm_o", "gemm_gate_up", "gemm_down", "gemm_lm_head",
// "decode_attention", "prefill_attention", "elementwise".
const char* ProfileOpName(ProfileOp op);
// The op named `name`, or false when there is none.
bool ProfileOpFromName(const std::string& name, ProfileOp* op);
bool IsGemm(ProfileOp op);

// A shape, with the meaning of calibrate::OpPoint: GEMMs and elementwise use
// tokens (= M); decode attention uses batch and context (cached tokens per
// sequence); prefill attention uses tokens (chunk) and context (cached).
struct OpShape {
  int64_t tokens = 0;
  int64_t batch = 0;
  int64_t context = 0;
};

// Invariant: size > 0 whenever the op does any work.
struct OpFeatures {
  // Fitting features, without the constant term; `count` of them are used.
  std::array<double, 2> x{};
  int count = 0;
  // Scalar work measure for log-space interpolation.
  double size = 0;
  // Roofline work (per GPU shard), for synthetic timings and projection.
  double flops = 0;
  double bytes = 0;
  // Coordinates in a measured table (FitForm::kGrid): `grid_outer` picks
  // between lines, `grid_inner` interpolates along a line. GEMMs and
  // elementwise: (1, tokens); decode attention: (batch, context); prefill
  // attention: (1, sqrt(n^2 + 2nc)) for a chunk of n after c cached, the
  // prompt length whose from-empty causal prefill does the same FLOPs
  // (exactly n when c = 0; measured tables have no cached-prefix rows).
  double grid_outer = 1;
  double grid_inner = 0;
};

// Feature choice per op (see docs in op_features.cc):
//   GEMMs:             [FLOPs, bytes]          size = FLOPs
//   decode attention:  [sequences, KV bytes]   size = bytes
//   prefill attention: [FLOPs, KV bytes]       size = FLOPs
//   elementwise:       [bytes]                 size = bytes
// and the table coordinates above for every op.
// A GEMM's [M x k] x [k x n] per-GPU dimensions under tensor parallelism.
struct GemmDims {
  double k = 0, n = 0;
};
GemmDims GemmDimsOf(ProfileOp op, const ModelSpec& model, int tp);

OpFeatures FeaturesOf(ProfileOp op, const OpShape& shape,
                      const ModelSpec& model, int tp);
std::vector<std::string> FeatureNames(ProfileOp op);

}  // namespace servesim
