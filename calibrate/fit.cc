// Per-op model fitting (see fit.h).
#include "calibrate/fit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace servesim::calibrate {
namespace {

// Design matrix [1, x1, ..., xn] of the sum form.
Eigen::MatrixXd SumDesign(const std::vector<Sample>& s) {
  const int n = s.empty() ? 0 : s[0].f.count;
  Eigen::MatrixXd a(s.size(), n + 1);
  for (size_t i = 0; i < s.size(); ++i) {
    a(i, 0) = 1;
    for (int j = 0; j < n; ++j) a(i, j + 1) = s[i].f.x[j];
  }
  return a;
}

Eigen::VectorXd Times(const std::vector<Sample>& s) {
  Eigen::VectorXd y(s.size());
  for (size_t i = 0; i < s.size(); ++i) y(i) = s[i].time_s;
  return y;
}

Eigen::VectorXd RelativeWeights(const Eigen::VectorXd& y) {
  return y.cwiseInverse();
}

double WeightedSse(const OpFit& fit, const std::vector<Sample>& s) {
  double sse = 0;
  for (const Sample& x : s) {
    const double r = (PredictOp(fit, x.f) - x.time_s) / x.time_s;
    sse += r * r;
  }
  return sse;
}

OpFit FitSum(const std::vector<Sample>& train) {
  const Eigen::VectorXd y = Times(train);
  const Eigen::VectorXd c =
      NonNegativeLeastSquares(SumDesign(train), y, RelativeWeights(y));
  OpFit fit;
  fit.form = FitForm::kSum;
  fit.coefficients.assign(c.data(), c.data() + c.size());
  return fit;
}

// Threshold search over the feature ratio x1/x2 (see fit.h).
OpFit FitMax(const std::vector<Sample>& train) {
  std::vector<Sample> s = train;
  std::sort(s.begin(), s.end(), [](const Sample& a, const Sample& b) {
    return a.f.x[0] * b.f.x[1] < b.f.x[0] * a.f.x[1];
  });
  const Eigen::VectorXd y = Times(s);
  const Eigen::VectorXd w = RelativeWeights(y);
  OpFit best;
  best.form = FitForm::kMax;
  double best_sse = INFINITY;
  for (size_t split = 0; split <= s.size(); ++split) {
    // Rows before `split` are memory-bound (x2), the rest compute-bound.
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(s.size(), 3);
    for (size_t i = 0; i < s.size(); ++i) {
      a(i, 0) = 1;
      if (i < split)
        a(i, 2) = s[i].f.x[1];
      else
        a(i, 1) = s[i].f.x[0];
    }
    const Eigen::VectorXd c = NonNegativeLeastSquares(a, y, w);
    OpFit fit;
    fit.form = FitForm::kMax;
    fit.coefficients = {c(0), c(1), c(2)};
    // Score the max model itself: a split whose coefficients put points in
    // the other regime is judged by what it would predict.
    const double sse = WeightedSse(fit, s);
    if (sse < best_sse) best_sse = sse, best = fit;
  }
  return best;
}

// Pool adjacent violators on log t ordered by log size; one knot per pool.
OpFit FitInterp(const std::vector<Sample>& train) {
  std::vector<std::pair<double, double>> pts;
  for (const Sample& s : train) {
    pts.emplace_back(std::log(s.f.size), std::log(s.time_s));
  }
  std::sort(pts.begin(), pts.end());
  struct Pool {
    double sum_x, sum_y;
    int n;
    double y() const { return sum_y / n; }
  };
  std::vector<Pool> pools;
  for (const auto& [x, y] : pts) {
    pools.push_back({x, y, 1});
    while (pools.size() > 1 &&
           pools[pools.size() - 2].y() >= pools.back().y()) {
      Pool last = pools.back();
      pools.pop_back();
      pools.back().sum_x += last.sum_x;
      pools.back().sum_y += last.sum_y;
      pools.back().n += last.n;
    }
  }
  OpFit fit;
  fit.form = FitForm::kInterp;
  for (const Pool& p : pools) {
    const double x = p.sum_x / p.n;
    // Pools keep increasing y; equal x can only come from tied sizes.
    if (!fit.knots_log_x.empty() && x <= fit.knots_log_x.back()) continue;
    fit.knots_log_x.push_back(x);
    fit.knots_log_y.push_back(p.y());
  }
  return fit;
}

}  // namespace

Eigen::VectorXd NonNegativeLeastSquares(const Eigen::MatrixXd& a,
                                        const Eigen::VectorXd& y,
                                        const Eigen::VectorXd& w) {
  const int n = static_cast<int>(a.cols());
  // Scale columns to unit max so FLOP (1e12) and constant (1) columns are
  // conditioned alike.
  Eigen::VectorXd scale(n);
  Eigen::MatrixXd aw = w.asDiagonal() * a;
  for (int j = 0; j < n; ++j) {
    const double m = aw.col(j).cwiseAbs().maxCoeff();
    scale(j) = m > 0 ? 1 / m : 0;
    aw.col(j) *= scale(j);
  }
  const Eigen::VectorXd yw = w.asDiagonal() * y;
  Eigen::VectorXd best = Eigen::VectorXd::Zero(n);
  double best_sse = yw.squaredNorm();
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<int> cols;
    for (int j = 0; j < n; ++j) {
      if ((mask >> j & 1) && scale(j) > 0) cols.push_back(j);
    }
    if (cols.empty()) continue;
    Eigen::MatrixXd sub(aw.rows(), cols.size());
    for (size_t k = 0; k < cols.size(); ++k) sub.col(k) = aw.col(cols[k]);
    const Eigen::VectorXd c = sub.colPivHouseholderQr().solve(yw);
    if ((c.array() < 0).any()) continue;
    const double sse = (sub * c - yw).squaredNorm();
    if (sse < best_sse) {
      best_sse = sse;
      best.setZero();
      for (size_t k = 0; k < cols.size(); ++k) best(cols[k]) = c(k);
    }
  }
  return best.cwiseProduct(scale);
}

OpFit FitOneForm(FitForm form, const std::vector<Sample>& train) {
  switch (form) {
    case FitForm::kSum:
      return FitSum(train);
    case FitForm::kMax:
      return FitMax(train);
    case FitForm::kInterp:
      return FitInterp(train);
    case FitForm::kGrid:
      break;  // tables are imported (calibrate/import.h), never fitted here
  }
  return FitSum(train);
}

double MapePct(const OpFit& fit, const std::vector<Sample>& samples) {
  if (samples.empty()) return 0;
  double sum = 0;
  for (const Sample& s : samples) {
    sum += std::fabs(PredictOp(fit, s.f) - s.time_s) / s.time_s;
  }
  return 100 * sum / samples.size();
}

OpFit FitOp(ProfileOp op, const std::vector<Sample>& samples,
            const FitOptions& o) {
  std::vector<Sample> train, test;
  for (size_t i = 0; i < samples.size(); ++i) {
    (static_cast<int>(i % o.holdout_every) == o.holdout_every - 1 ? test
                                                                  : train)
        .push_back(samples[i]);
  }
  std::vector<FitForm> forms = {FitForm::kSum};
  if (!samples.empty() && samples[0].f.count == 2) {
    forms.push_back(FitForm::kMax);
  }
  forms.push_back(FitForm::kInterp);
  OpFit best;
  double best_mape = INFINITY;
  std::map<std::string, double> mapes;
  for (FitForm form : forms) {
    OpFit fit = FitOneForm(form, train);
    const double mape = MapePct(fit, test);
    mapes[FitFormName(form)] = mape;
    if (mape < best_mape) best_mape = mape, best = std::move(fit);
  }
  best.op = op;
  best.heldout_mape_pct = best_mape;
  best.candidate_mape_pct = mapes;
  best.fit_points = static_cast<int>(train.size());
  best.heldout_points = static_cast<int>(test.size());
  return best;
}

ProfileOp ToProfileOp(OpKind kind) { return static_cast<ProfileOp>(kind); }

OpShape ToShape(const OpPoint& p) { return {p.tokens, p.batch, p.context}; }

std::vector<OpFit> FitAll(const ModelSpec& model, int tp,
                          const std::vector<OpTiming>& timings,
                          const FitOptions& o) {
  std::vector<std::vector<Sample>> by_op(kNumProfileOps);
  for (const OpTiming& t : timings) {
    const ProfileOp op = ToProfileOp(t.point.kind);
    if (!(t.median_s > 0)) continue;  // a failed or skipped point
    by_op[static_cast<int>(op)].push_back(
        {FeaturesOf(op, ToShape(t.point), model, tp), t.median_s});
  }
  std::vector<OpFit> fits;
  for (int i = 0; i < kNumProfileOps; ++i) {
    const ProfileOp op = static_cast<ProfileOp>(i);
    if (by_op[i].size() < 4) {
      throw std::invalid_argument(
          std::string("too few timings for ") + ProfileOpName(op) + " (" +
          std::to_string(by_op[i].size()) + "; need 4 to fit and hold out)");
    }
    fits.push_back(FitOp(op, by_op[i], o));
  }
  return fits;
}

}  // namespace servesim::calibrate
