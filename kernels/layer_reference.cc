// CPU references for the memory-bound rest of a layer (RMSNorm with the
// residual add, rotary embedding, SiLU-and-multiply) and the GEMM.
#include <Eigen/Core>
#include <cmath>

#include "kernels/reference.h"

namespace servesim::kernels {

void AddRmsNormRef(const float* x, float* residual, const float* weight,
                   int tokens, int hidden, float eps, float* out) {
  for (int t = 0; t < tokens; ++t) {
    const int64_t base = static_cast<int64_t>(t) * hidden;
    double sumsq = 0;
    for (int i = 0; i < hidden; ++i) {
      float h = x[base + i] + (residual ? residual[base + i] : 0.f);
      if (residual) residual[base + i] = h;
      sumsq += double(h) * h;
    }
    const float inv = 1.0f / std::sqrt(float(sumsq / hidden) + eps);
    for (int i = 0; i < hidden; ++i) {
      float h = residual ? residual[base + i] : x[base + i];
      out[base + i] = h * inv * weight[i];
    }
  }
}

void RotaryRef(float* q, float* k, const int32_t* positions, int tokens,
               int heads, int kv_heads, int head_dim, float theta) {
  const int half = head_dim / 2;
  auto rotate = [&](float* row, int pos) {
    for (int i = 0; i < half; ++i) {
      double angle = pos * std::pow(double(theta), -2.0 * i / head_dim);
      double c = std::cos(angle), s = std::sin(angle);
      double x1 = row[i], x2 = row[i + half];
      row[i] = float(x1 * c - x2 * s);
      row[i + half] = float(x2 * c + x1 * s);
    }
  };
  for (int t = 0; t < tokens; ++t) {
    for (int h = 0; h < heads; ++h)
      rotate(q + (static_cast<int64_t>(t) * heads + h) * head_dim, positions[t]);
    for (int h = 0; h < kv_heads; ++h)
      rotate(k + (static_cast<int64_t>(t) * kv_heads + h) * head_dim, positions[t]);
  }
}

void SiluMulRef(const float* gate_up, int tokens, int inter, float* out) {
  for (int t = 0; t < tokens; ++t) {
    const float* g = gate_up + static_cast<int64_t>(t) * 2 * inter;
    for (int i = 0; i < inter; ++i) {
      float x = g[i];
      out[static_cast<int64_t>(t) * inter + i] =
          x / (1.0f + std::exp(-x)) * g[inter + i];
    }
  }
}

void GemmRef(const float* a, const float* w, int m, int n, int k, float* c) {
  using RowMat =
      Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMat> A(a, m, k), W(w, n, k);
  Eigen::Map<RowMat> C(c, m, n);
  C.noalias() = A * W.transpose();
}

}  // namespace servesim::kernels
