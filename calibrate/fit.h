// Fitting per-op timing models (plain C++ and Eigen, tested on the CPU).
//
// Each op is fitted three ways on the same training points and the form
// that predicts the held-out points best is kept:
//   sum    t = c0 + sum c_i x_i, non-negative least squares;
//   max    t = c0 + max(c1 x1, c2 x2): the roofline with a launch constant
//          (two-feature ops only). The regime is compute-bound exactly when
//          x1/x2 > c2/c1, i.e. a threshold on the feature ratio, so we try
//          every threshold between sorted training points and keep the
//          best: a global optimum, not an alternating local one;
//   interp log t piecewise linear in log size through isotonic (pool
//          adjacent violators) knots: monotone, assumes nothing about the
//          kernel, and catches what the roofline terms cannot (tile steps).
// Least squares is weighted by 1/t: timings span five decades and the
// quoted error is relative (MAPE), so every point counts by its relative
// error rather than its seconds.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "calibrate/op_timing.h"
#include "sim/cost/calibration_profile.h"

namespace servesim::calibrate {

struct Sample {
  OpFeatures f;
  double time_s = 0;
};

struct FitOptions {
  // Every k-th point of an op (grid order, indices k-1, 2k-1, ...) is held
  // out of the fit and used only to measure the error.
  int holdout_every = 4;
};

// min ||W (A c - y)|| subject to c >= 0, exactly, by trying every subset of
// active columns (A has at most 6 columns here). w: per-row weights.
Eigen::VectorXd NonNegativeLeastSquares(const Eigen::MatrixXd& a,
                                        const Eigen::VectorXd& y,
                                        const Eigen::VectorXd& w);

// One form fitted to `train` (op and error fields left for the caller).
OpFit FitOneForm(FitForm form, const std::vector<Sample>& train);

// Mean absolute percentage error of `fit` on `samples`.
double MapePct(const OpFit& fit, const std::vector<Sample>& samples);

// Splits samples into training and held-out sets, fits every applicable
// form, and returns the best by held-out MAPE (ties go to the simpler, in
// the order sum, max, interp). The returned model is the one fitted on the
// training points only, so its quoted error is a true out-of-sample error.
OpFit FitOp(ProfileOp op, const std::vector<Sample>& samples,
            const FitOptions& o);

// Converts timings to samples for `model` at `tp` and fits each op; ops with
// fewer than 4 timings are an error (std::invalid_argument).
std::vector<OpFit> FitAll(const ModelSpec& model, int tp,
                          const std::vector<OpTiming>& timings,
                          const FitOptions& o);

ProfileOp ToProfileOp(OpKind kind);
OpShape ToShape(const OpPoint& p);

}  // namespace servesim::calibrate
