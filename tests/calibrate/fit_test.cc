// Tests of the per-op fitting on synthetic timings with known coefficients.
#include "calibrate/fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/core/rng.h"

namespace servesim::calibrate {
namespace {

// A GEMM-like op: FLOPs and bytes of [M x 4096] x [4096 x 6144] in bf16.
OpFeatures Gemm(double m) {
  OpFeatures f;
  f.flops = 2 * m * 4096 * 6144;
  f.bytes = 2 * (4096.0 * 6144 + m * 4096 + m * 6144);
  f.x = {f.flops, f.bytes};
  f.count = 2;
  f.size = f.flops;
  return f;
}

// Known truth: 5 us launch, 700 TFLOP/s, 3.8 TB/s.
constexpr double kC0 = 5e-6, kPerFlop = 1 / 700e12, kPerByte = 1 / 3.8e12;

std::vector<Sample> MaxData(double noise, uint64_t seed = 3) {
  Rng rng(seed, "fit-test");
  std::vector<Sample> s;
  for (double m = 1; m <= 16384; m *= 1.25) {
    const OpFeatures f = Gemm(std::round(m));
    const double t = kC0 + std::max(kPerFlop * f.x[0], kPerByte * f.x[1]);
    s.push_back({f, t * std::exp(noise * rng.StandardNormal())});
  }
  return s;
}

// Decode-attention-like sum data: t = c0 + a * seqs + b * kv_bytes.
std::vector<Sample> SumData(double noise) {
  Rng rng(5, "fit-test-sum");
  std::vector<Sample> s;
  for (int b = 1; b <= 512; b *= 2) {
    for (int c = 128; c <= 32768; c *= 2) {
      OpFeatures f;
      f.x = {static_cast<double>(b), b * 4096.0 * (c + 1)};
      f.count = 2;
      f.size = f.x[1];
      const double t = 8e-6 + 2e-8 * f.x[0] + f.x[1] / 3e12;
      s.push_back({f, t * std::exp(noise * rng.StandardNormal())});
    }
  }
  return s;
}

TEST(NnlsTest, RecoversExactNonNegativeSolution) {
  Eigen::MatrixXd a(4, 2);
  a << 1, 0, 1, 1, 1, 2, 1, 3;
  const Eigen::VectorXd y = a * Eigen::Vector2d(2, 0.5);
  const Eigen::VectorXd c =
      NonNegativeLeastSquares(a, y, Eigen::VectorXd::Ones(4));
  EXPECT_NEAR(c(0), 2, 1e-12);
  EXPECT_NEAR(c(1), 0.5, 1e-12);
}

TEST(NnlsTest, ClampsANegativeCoefficientToZero) {
  Eigen::MatrixXd a(3, 2);
  a << 1, 1, 1, 2, 1, 3;
  const Eigen::Vector3d y(3, 2, 1);  // unconstrained slope would be -1
  const Eigen::VectorXd c =
      NonNegativeLeastSquares(a, y, Eigen::VectorXd::Ones(3));
  EXPECT_EQ(c(1), 0);
  EXPECT_NEAR(c(0), 2, 1e-12);  // the mean, the best constant
}

TEST(FitTest, MaxFormRecoversRooflineCoefficientsFromNoiselessData) {
  const OpFit fit = FitOneForm(FitForm::kMax, MaxData(0));
  ASSERT_EQ(fit.coefficients.size(), 3u);
  EXPECT_NEAR(fit.coefficients[0], kC0, 1e-6 * kC0);
  EXPECT_NEAR(fit.coefficients[1], kPerFlop, 1e-6 * kPerFlop);
  EXPECT_NEAR(fit.coefficients[2], kPerByte, 1e-6 * kPerByte);
}

TEST(FitTest, MaxFormRecoversCoefficientsFromNoisyData) {
  const OpFit fit = FitOneForm(FitForm::kMax, MaxData(0.02));
  EXPECT_NEAR(fit.coefficients[1], kPerFlop, 0.02 * kPerFlop);
  // In the memory-bound regime the bytes are almost all weights, a constant,
  // so noise trades the launch constant against seconds per byte; what is
  // identified tightly is their sum, the weight-streaming floor.
  const double w = Gemm(1).bytes;
  EXPECT_NEAR(fit.coefficients[0] + fit.coefficients[2] * w, kC0 + kPerByte * w,
              0.01 * (kC0 + kPerByte * w));
  EXPECT_NEAR(fit.coefficients[2], kPerByte, 0.06 * kPerByte);
}

TEST(FitTest, SumFormRecoversCoefficients) {
  const OpFit exact = FitOneForm(FitForm::kSum, SumData(0));
  EXPECT_NEAR(exact.coefficients[0], 8e-6, 1e-9);
  EXPECT_NEAR(exact.coefficients[1], 2e-8, 1e-11);
  EXPECT_NEAR(exact.coefficients[2], 1 / 3e12, 1e-6 / 3e12);
  const OpFit noisy = FitOneForm(FitForm::kSum, SumData(0.02));
  EXPECT_NEAR(noisy.coefficients[0], 8e-6, 0.05 * 8e-6);
  EXPECT_NEAR(noisy.coefficients[2], 1 / 3e12, 0.01 / 3e12);
}

TEST(FitTest, HeldOutErrorIsSmallWhenTheModelIsRight) {
  const OpFit fit = FitOp(ProfileOp::kGemmQkv, MaxData(0.02), FitOptions{});
  // 2% log-normal noise has mean |error| ~ 1.6%; the chosen form can be
  // the interpolator when the two are within noise of each other.
  EXPECT_LT(fit.candidate_mape_pct.at("max"), 3.0);
  EXPECT_LE(fit.heldout_mape_pct, fit.candidate_mape_pct.at("max"));
  EXPECT_GT(fit.heldout_points, 5);
  EXPECT_EQ(fit.candidate_mape_pct.size(), 3u);
}

TEST(FitTest, HeldOutErrorIsLargeWhenTheModelIsWrong) {
  // A sum of compute and memory terms double-counts near the ridge and the
  // launch constant cannot fix it: its held-out error must show that.
  const OpFit fit = FitOp(ProfileOp::kGemmQkv, MaxData(0), FitOptions{});
  EXPECT_GT(fit.candidate_mape_pct.at("sum"), 8.0);
  EXPECT_LT(fit.candidate_mape_pct.at("max"), 1e-3);
  // Quadratic truth fitted by a linear model in one feature.
  std::vector<Sample> quad;
  for (double x = 1; x < 1e4; x *= 1.5) {
    OpFeatures f;
    f.x = {x, 0};
    f.count = 1;
    f.size = x;
    quad.push_back({f, 1e-6 * (1 + x * x)});
  }
  const OpFit wrong = FitOneForm(FitForm::kSum, quad);
  EXPECT_GT(MapePct(wrong, quad), 50.0);
}

TEST(FitTest, InterpolatorIsMonotoneOnNoisyData) {
  const OpFit fit = FitOneForm(FitForm::kInterp, MaxData(0.2, 11));
  ASSERT_GE(fit.knots_log_x.size(), 2u);
  for (size_t i = 1; i < fit.knots_log_x.size(); ++i) {
    EXPECT_GT(fit.knots_log_x[i], fit.knots_log_x[i - 1]);
    EXPECT_GE(fit.knots_log_y[i], fit.knots_log_y[i - 1]);
  }
  double last = 0;
  for (double m = 0.5; m < 40000; m *= 1.07) {
    const double t = PredictOp(fit, Gemm(m));
    EXPECT_GE(t, last) << "at M=" << m;
    last = t;
  }
}

TEST(FitTest, InterpolatorPassesThroughNoiselessMonotoneData) {
  const std::vector<Sample> data = MaxData(0);
  const OpFit fit = FitOneForm(FitForm::kInterp, data);
  for (const Sample& s : data) {
    EXPECT_NEAR(PredictOp(fit, s.f), s.time_s, 1e-9 * s.time_s);
  }
}

TEST(FitTest, FitAllRejectsAnOpWithTooFewTimings) {
  ModelSpec m;
  EXPECT_THROW(FitAll(m, 1, {}, FitOptions{}), std::invalid_argument);
}

}  // namespace
}  // namespace servesim::calibrate
