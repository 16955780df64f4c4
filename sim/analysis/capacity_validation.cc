// Long-window validation of a capacity answer (see capacity_validation.h).
#include "sim/analysis/capacity_validation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>

#include "sim/analysis/runs.h"

namespace servesim {
namespace {

// Standard normal quantile by bisection on the CDF (0.5 erfc(-x / sqrt 2)):
// called a few times per answer, so exactness beats speed.
double NormalQuantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// A bracket expands by this factor per run until it holds the threshold.
constexpr double kExpand = 1.08;
// Past this many runs a window's search stops with what it has (a bug
// guard: the bracket shrinks at least 20% per run).
constexpr int kMaxRunsPerWindow = 40;

class WindowSearch {
 public:
  WindowSearch(const Scenario& base, const std::vector<SloTerm>& slo,
               const ValidationOptions& o, double floor_rate, double cap_rate)
      : base_(base), slo_(slo), o_(o), floor_(floor_rate), cap_(cap_rate) {}

  // The threshold of window `index`, searched from `start`.
  StatusOr<WindowThreshold> Search(int index, double start) {
    WindowThreshold w;
    w.seed = base_.seed + o_.seed_offset + static_cast<uint64_t>(index);
    double lo = 0, hi = 0, f_lo = 0, f_hi = 0;
    double r = std::clamp(start, floor_, cap_);
    // Expand from the start until the threshold is bracketed or censored.
    while (true) {
      StatusOr<double> f = Probe(index, r, &w);
      if (!f.ok()) return f.status();
      if (*f <= 0) {
        lo = r, f_lo = *f;
        if (hi > 0) break;
        if (r >= cap_) {
          w.capped = true;
          w.rate = cap_;
          return w;
        }
        r = std::min(cap_, r * kExpand);
      } else {
        hi = r, f_hi = *f;
        if (lo > 0) break;
        if (r <= floor_) {
          w.floored = true;
          w.rate = floor_;
          w.fails_at = floor_;
          return w;
        }
        r = std::max(floor_, r / kExpand);
      }
    }
    // False position on log rate, Illinois rule (a side kept twice has its
    // value halved), each new point held inside the middle 80% of the
    // bracket so it shrinks by at least a fifth per run.
    int kept_side = 0;
    while (hi / lo - 1 > o_.rate_tol && w.runs < kMaxRunsPerWindow) {
      const double a = std::log(lo), b = std::log(hi);
      double x = std::isfinite(f_hi) ? a + (b - a) * (-f_lo) / (f_hi - f_lo) : (a + b) / 2;
      x = std::clamp(x, a + 0.1 * (b - a), b - 0.1 * (b - a));
      r = std::exp(x);
      StatusOr<double> f = Probe(index, r, &w);
      if (!f.ok()) return f.status();
      if (*f <= 0) {
        lo = r, f_lo = *f;
        if (kept_side == +1) f_hi /= 2;
        kept_side = +1;
      } else {
        hi = r, f_hi = *f;
        if (kept_side == -1) f_lo /= 2;
        kept_side = -1;
      }
    }
    w.rate = lo;
    w.fails_at = hi;
    return w;
  }

  int64_t requests() const { return requests_; }

 private:
  // log(max over terms of value / limit) of the window at `rate`; +inf
  // when the run is unstable or measured nothing.
  StatusOr<double> Probe(int index, double rate, WindowThreshold* w) {
    StatusOr<Scenario> sc = WithRate(base_, rate);  // base_ is one window long
    if (!sc.ok()) return sc.status();
    RunSpec spec;
    spec.scenario = std::make_shared<const Scenario>(std::move(sc.value()));
    spec.replication = static_cast<int>(o_.seed_offset) + index;
    for (const SloTerm& t : slo_) spec.extra_percentiles.push_back(t.percentile);
    const RunResult run = RunOne(spec);
    ++w->runs;
    requests_ += run.summary.created;
    if (run.summary.unstable || run.summary.completed == 0) return INFINITY;
    double worst = 0;
    for (const SloTerm& t : slo_) {
      const double v = SloValue(run.summary, t);
      if (!std::isfinite(v)) return INFINITY;
      worst = std::max(worst, v / t.limit_ms);
    }
    return worst > 0 ? std::log(worst) : -INFINITY;
  }

  const Scenario& base_;
  const std::vector<SloTerm>& slo_;
  const ValidationOptions& o_;
  double floor_, cap_;
  std::atomic<int64_t> requests_{0};
};

double Median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

// Mean and sample standard deviation of log x (sd 0 for one sample).
struct LogMoments {
  double mean = 0, sd = 0;
};

LogMoments LogMomentsOf(const std::vector<double>& xs) {
  LogMoments l;
  const double n = static_cast<double>(xs.size());
  for (double x : xs) l.mean += std::log(x);
  l.mean /= n;
  if (xs.size() < 2) return l;
  double ss = 0;
  for (double x : xs) ss += (std::log(x) - l.mean) * (std::log(x) - l.mean);
  l.sd = std::sqrt(ss / (n - 1));
  return l;
}

}  // namespace

Interval LowerQuantileOfLogNormal(const std::vector<double>& rates, double share) {
  Interval r;
  r.n = static_cast<int>(rates.size());
  if (r.n == 0) return r;
  const LogMoments l = LogMomentsOf(rates);
  const double m = l.mean, s = l.sd;
  if (r.n == 1) {
    r.mean = r.lo = r.hi = std::exp(m);
    return r;
  }
  const double z = NormalQuantile(share);
  const double q = m - z * s;
  const double se = s * std::sqrt(1.0 / r.n + z * z / (2.0 * (r.n - 1)));
  const double half = StudentT975(r.n - 1) * se;
  r.mean = std::exp(q);
  r.lo = std::exp(q - half);
  r.hi = std::exp(q + half);
  return r;
}

StatusOr<ValidatedCapacity> ValidateCapacity(const Scenario& base,
                                             const std::vector<SloTerm>& slo,
                                             double start_rate, double floor_rate,
                                             double cap_rate,
                                             const ValidationOptions& o,
                                             ProgressBar* bar) {
  if (!(floor_rate > 0 && floor_rate < cap_rate)) {
    return Status::Error(base.file + ": capacity validation needs 0 < floor < cap rate");
  }
  if (o.min_windows < 3 || o.max_windows < o.min_windows || o.window_requests < 1 ||
      !(o.share > 0.5 && o.share < 1)) {
    return Status::Error(base.file + ": capacity validation: expected >= 3 windows, a "
                         "positive window and a share in (0.5, 1)");
  }
  // One window's scenario, parsed once; each probe only sets its rate.
  const int64_t n = o.window_requests;
  StatusOr<Scenario> window =
      WithNumRequests(base, n);
  if (!window.ok()) return window.status();
  ValidatedCapacity v;
  v.share = o.share;
  v.window_requests = o.window_requests;
  WindowSearch search(*window, slo, o, floor_rate, cap_rate);
  while (true) {
    const int have = static_cast<int>(v.windows.size());
    const int add = std::min(o.min_windows, o.max_windows - have);
    // Later windows start at the median threshold found so far.
    double start = start_rate;
    if (have > 0) {
      std::vector<double> seen;
      for (const WindowThreshold& w : v.windows) seen.push_back(w.rate);
      start = Median(seen);
    }
    std::vector<StatusOr<WindowThreshold>> found(add, Status::Error("not run"));
    if (bar) bar->AddTotal(add);
    ParallelFor(
        add, o.jobs, [&](int i) { found[i] = search.Search(have + i, start); }, bar);
    for (StatusOr<WindowThreshold>& f : found) {
      if (!f.ok()) return f.status();
      v.runs += f->runs;
      v.windows.push_back(*f);
    }
    std::vector<double> rates;
    for (const WindowThreshold& w : v.windows) rates.push_back(w.rate);
    v.rate = LowerQuantileOfLogNormal(rates, o.share);
    v.rate.mean = std::min(v.rate.mean, cap_rate);
    v.rate.hi = std::min(v.rate.hi, cap_rate);
    v.rate.lo = std::min(v.rate.lo, v.rate.mean);
    v.log_sd = LogMomentsOf(rates).sd;
    const bool precise = (v.rate.hi - v.rate.lo) / 2 <= o.rate_precision * v.rate.mean;
    if (precise || static_cast<int>(v.windows.size()) >= o.max_windows) {
      v.stopped = precise ? "precision" : "budget";
      break;
    }
  }
  v.requests_simulated = search.requests();
  int at_answer = 0, at_lower = 0;
  for (const WindowThreshold& w : v.windows) {
    at_answer += w.rate >= v.rate.mean * (1 - 1e-12) ? 1 : 0;
    at_lower += w.rate >= v.rate.lo * (1 - 1e-12) ? 1 : 0;
  }
  v.met_at_answer = static_cast<double>(at_answer) / v.windows.size();
  v.met_at_lower = static_cast<double>(at_lower) / v.windows.size();
  v.window_hours = v.rate.mean > 0 ? o.window_requests / v.rate.mean / 3600 : 0;
  return v;
}

}  // namespace servesim
