// The parametric length families: fixed, uniform, normal, lognormal and
// exponential. Each rounds its draw to the nearest integer and clamps it to
// the shared [min, max]; the normal is truncated instead (see below).
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/workload/length_families.h"

namespace servesim {
namespace {


// The standard normal quantile at 0.99: p99 = median * exp(sigma * kZ99).
constexpr double kZ99 = 2.3263478740408408;

// Derived parameters read best at a fixed precision: "mu=4.787".
std::string Fixed3(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f", x);
  return buf;
}

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

class FixedLengths : public LengthDistribution {
 public:
  FixedLengths(int32_t value, LengthClamp clamp)
      : value_(value), clamp_(clamp) {}
  int32_t Sample(Rng&) const override { return value_; }
  int32_t Max() const override { return value_; }
  std::string Describe() const override {
    return "fixed(" + std::to_string(value_) + "), " + clamp_.Describe();
  }
  bool Constant() const override { return true; }

 private:
  int32_t value_;
  LengthClamp clamp_;
};

// Inclusive integer range; its min/max are the shared clamp itself.
class UniformLengths : public LengthDistribution {
 public:
  explicit UniformLengths(LengthClamp range) : range_(range) {}
  int32_t Sample(Rng& rng) const override {
    const uint64_t width = static_cast<uint64_t>(range_.max - range_.min) + 1;
    return range_.min + static_cast<int32_t>(rng.Below(width));
  }
  int32_t Max() const override { return range_.max; }
  std::string Describe() const override {
    return "uniform(" + std::to_string(range_.min) + ".." +
           std::to_string(range_.max) + " inclusive), " + range_.Describe();
  }
  bool Constant() const override { return range_.min == range_.max; }

 private:
  LengthClamp range_;
};

// A true truncated normal: draws whose rounded value falls outside
// [min, max] are redrawn, so no probability piles up at the bounds. The
// factory refuses configurations whose acceptance is below
// kMinNormalAcceptance, so kMaxNormalAttempts consecutive rejections has
// probability at most 0.99^1000 ~ 4e-5; only then is the last draw clamped,
// which keeps Sample() bounded in time.
constexpr double kMinNormalAcceptance = 0.01;
constexpr int kMaxNormalAttempts = 1000;

class NormalLengths : public LengthDistribution {
 public:
  NormalLengths(double mean, double stddev, double acceptance,
                LengthClamp clamp)
      : mean_(mean), stddev_(stddev), acceptance_(acceptance), clamp_(clamp) {}
  int32_t Sample(Rng& rng) const override {
    double x = mean_;
    for (int i = 0; i < kMaxNormalAttempts; ++i) {
      x = mean_ + stddev_ * rng.StandardNormal();
      const double r = std::round(x);
      if (r >= clamp_.min && r <= clamp_.max) return static_cast<int32_t>(r);
    }
    return clamp_.Apply(x);
  }
  int32_t Max() const override { return clamp_.max; }
  std::string Describe() const override {
    return "normal(mean=" + FormatParam(mean_) +
           ", std=" + FormatParam(stddev_) + ", truncated by resampling, " +
           FormatParam(100.0 * acceptance_, 4) + "% of mass kept), " +
           clamp_.Describe();
  }

 private:
  double mean_, stddev_, acceptance_;
  LengthClamp clamp_;
};

class LognormalLengths : public LengthDistribution {
 public:
  LognormalLengths(double mu, double sigma, bool from_quantiles,
                   LengthClamp clamp)
      : mu_(mu),
        sigma_(sigma),
        from_quantiles_(from_quantiles),
        clamp_(clamp) {}
  int32_t Sample(Rng& rng) const override {
    return clamp_.Apply(std::exp(mu_ + sigma_ * rng.StandardNormal()));
  }
  int32_t Max() const override { return clamp_.max; }
  std::string Describe() const override {
    const std::string median = FormatParam(std::exp(mu_));
    const std::string p99 = FormatParam(std::exp(mu_ + sigma_ * kZ99));
    const std::string mu = Fixed3(mu_), sigma = Fixed3(sigma_);
    // Lead with the form the user wrote; derive the other.
    const std::string body = from_quantiles_
                                 ? "median=" + median + ", p99=" + p99 +
                                       " => mu=" + mu + ", sigma=" + sigma
                                 : "mu=" + mu + ", sigma=" + sigma +
                                       " => median=" + median + ", p99=" + p99;
    return "lognormal(" + body + "), " + clamp_.Describe();
  }

 private:
  double mu_, sigma_;
  bool from_quantiles_;
  LengthClamp clamp_;
};

class ExponentialLengths : public LengthDistribution {
 public:
  ExponentialLengths(double mean, LengthClamp clamp)
      : mean_(mean), clamp_(clamp) {}
  int32_t Sample(Rng& rng) const override {
    return clamp_.Apply(rng.Exponential(mean_));
  }
  int32_t Max() const override { return clamp_.max; }
  std::string Describe() const override {
    return "exponential(mean=" + FormatParam(mean_) + "), " + clamp_.Describe();
  }

 private:
  double mean_;
  LengthClamp clamp_;
};

}  // namespace

std::unique_ptr<LengthDistribution> MakeFixedLengths(const JsonView& cfg) {
  cfg.AllowKeys({"dist", "value", "min", "max"});
  const LengthClamp clamp = ReadLengthClamp(cfg);
  const int64_t value =
      cfg.RequireInteger("value", Range::Closed(1, kMaxLengthTokens));
  // Clamping a constant silently would hide a contradictory config.
  if (!clamp.Contains(value)) {
    cfg.Fail("value", "an integer in [" + std::to_string(clamp.min) + ", " +
                          std::to_string(clamp.max) + "] (the min/max clamp)");
  }
  return std::make_unique<FixedLengths>(static_cast<int32_t>(value), clamp);
}

std::unique_ptr<LengthDistribution> MakeUniformLengths(const JsonView& cfg) {
  cfg.AllowKeys({"dist", "min", "max"});
  // Here min and max are the range itself, so both are required.
  cfg.RequireInteger("min", Range::Closed(1, kMaxLengthTokens));
  cfg.RequireInteger("max", Range::Closed(1, kMaxLengthTokens));
  return std::make_unique<UniformLengths>(ReadLengthClamp(cfg));
}

std::unique_ptr<LengthDistribution> MakeNormalLengths(const JsonView& cfg) {
  cfg.AllowKeys({"dist", "mean", "std", "min", "max"});
  const LengthClamp clamp = ReadLengthClamp(cfg);
  const double mean = cfg.RequireNumber("mean");
  const double stddev = cfg.RequireNumber("std", Range::Positive());
  // Mass of the draws that round into [min, max].
  const double acceptance = NormalCdf((clamp.max + 0.5 - mean) / stddev) -
                            NormalCdf((clamp.min - 0.5 - mean) / stddev);
  if (!(acceptance >= kMinNormalAcceptance)) {
    cfg.FailMessage("", "normal(mean=" + FormatParam(mean) +
                            ", std=" + FormatParam(stddev) + ") puts only " +
                            FormatParam(100.0 * acceptance, 3) +
                            "% of its mass in the allowed range " +
                            clamp.Describe() + "; expected at least 1%");
  }
  return std::make_unique<NormalLengths>(mean, stddev, acceptance, clamp);
}

std::unique_ptr<LengthDistribution> MakeLognormalLengths(const JsonView& cfg) {
  cfg.AllowKeys({"dist", "median", "p99", "mu", "sigma", "min", "max"});
  const LengthClamp clamp = ReadLengthClamp(cfg);
  const bool quantiles = cfg.Has("median") || cfg.Has("p99");
  const bool moments = cfg.Has("mu") || cfg.Has("sigma");
  if (quantiles == moments) {
    cfg.FailMessage("", quantiles
                            ? "give either median and p99, or mu and sigma, "
                              "not both"
                            : "expected median and p99, or mu and sigma");
  }
  if (quantiles) {
    const double median = cfg.RequireNumber("median", Range::Positive());
    const double p99 = cfg.RequireNumber("p99", Range::Positive());
    if (!(p99 > median)) {
      cfg.Fail("p99", "a number > median (" + FormatParam(median) + ")");
    }
    const double mu = std::log(median);
    return std::make_unique<LognormalLengths>(mu, (std::log(p99) - mu) / kZ99,
                                              true, clamp);
  }
  const double mu = cfg.RequireNumber("mu");
  const double sigma = cfg.RequireNumber("sigma", Range::Positive());
  return std::make_unique<LognormalLengths>(mu, sigma, false, clamp);
}

std::unique_ptr<LengthDistribution> MakeExponentialLengths(
    const JsonView& cfg) {
  cfg.AllowKeys({"dist", "mean", "min", "max"});
  const LengthClamp clamp = ReadLengthClamp(cfg);
  const double mean = cfg.RequireNumber("mean", Range::Positive());
  return std::make_unique<ExponentialLengths>(mean, clamp);
}

}  // namespace servesim
